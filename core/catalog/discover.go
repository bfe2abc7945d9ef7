package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Discovery bounds.
const (
	// DefaultMaxPages bounds the pages drained per list kind.
	DefaultMaxPages = 1000
	// DefaultPageTimeout bounds each page request.
	DefaultPageTimeout = 30 * time.Second
	// DefaultMaxItems bounds the items kept per list kind of one server
	// (tools and dropped tools count alike): five times a server of
	// 10,000 tools, itself far more than common servers list.
	DefaultMaxItems = 50_000
	// DefaultMaxBytes bounds the bytes kept per list kind of one server,
	// counted as Discover documents (about the compact JSON the server
	// sent). 32 MiB holds 10,000 tools of 3.2 KiB each on average, where
	// most real tools take 0.5 to 3 KiB; and it keeps one server's retained
	// catalog far under 1 GiB: at most 128 MiB of listings for the four
	// kinds, of which a catalog keeps the raw prompts and resources and,
	// of tools, only names, descriptions and packed narrowed schemas. While
	// Discover runs, decoded tools take about five times their JSON size
	// (map[string]any values), so some 165 MiB at the bound. (64 MiB let
	// one hostile server take the CLI to 530 MiB, 680 MiB with --json.)
	DefaultMaxBytes = 32 << 20
)

// Partial reasons (values of Lists.Partial and Catalog.Partial).
const (
	// PartialPageLimit: MaxPages pages were drained and the server still
	// had a next cursor.
	PartialPageLimit = "page_limit"
	// PartialRepeatedCursor: the server sent a cursor already requested.
	PartialRepeatedCursor = "repeated_cursor"
	// PartialPageTimeout: a page request ran past PageTimeout.
	PartialPageTimeout = "page_timeout"
	// PartialListFailed: a page request failed, or ctx ended before the
	// list was drained.
	PartialListFailed = "list_failed"
	// PartialItemsExceeded: MaxItems items were kept and the server
	// listed more (on the same page or behind a next cursor).
	PartialItemsExceeded = "discovery_items_exceeded"
	// PartialBytesExceeded: the next item (or next cursor) would have
	// taken the kind's bytes over MaxBytes.
	PartialBytesExceeded = "discovery_bytes_exceeded"
)

// DiscoverOptions bounds Discover. nil means the defaults.
type DiscoverOptions struct {
	// MaxPages is the page bound per list kind; 0 (or less) means
	// DefaultMaxPages.
	MaxPages int
	// PageTimeout bounds each page request; 0 (or less) means
	// DefaultPageTimeout.
	PageTimeout time.Duration
	// MaxItems is the item bound per list kind; 0 (or less) means
	// DefaultMaxItems.
	MaxItems int
	// MaxBytes is the byte bound per list kind; 0 (or less) means
	// DefaultMaxBytes.
	MaxBytes int64
}

// Lists is what Discover drained, before Build: every item in the
// server's order, across pages.
type Lists struct {
	Tools             []ports.ToolItem
	Prompts           []json.RawMessage
	Resources         []json.RawMessage
	ResourceTemplates []json.RawMessage
	// Dropped are the tools the session reported as excluded.
	Dropped []ports.DroppedTool
	// Partial maps every list kind whose drain stopped early to a Partial*
	// reason; nil or empty when every declared list was drained.
	Partial map[ports.ListKind]string
	// Cache maps every list kind whose pages carried caching hints (the
	// modern protocol era) to their combination (see CombineCache); nil
	// when none did.
	Cache map[ports.ListKind]ports.CacheHint

	// prepared is the narrowing Discover did page by page, which Build
	// uses for this very Tools slice instead of narrowing again.
	prepared *preparedTools
}

// listKinds are the list kinds Discover drains, in order.
var listKinds = [...]ports.ListKind{ports.ListTools, ports.ListPrompts, ports.ListResources, ports.ListResourceTemplates}

// Discover drains, page by page, every list kind sess.Identity().Declared
// names, and never calls the list method of an undeclared kind. Each kind
// is bounded by opts.MaxPages pages, a per-page timeout of opts.PageTimeout
// on a ctx derived from ctx, repeated-cursor detection (a next cursor
// already requested for that kind stops it), and totals of opts.MaxItems
// items and opts.MaxBytes bytes. A kind that stops early is in
// Lists.Partial with a Partial* reason and keeps the items gathered so
// far; a partial list is never reported complete.
//
// Items and bytes are counted as the session delivers them, item by item
// in the server's order, and a kind keeps every item that fits in both
// bounds up to the first that does not: then it stops, with
// PartialItemsExceeded or PartialBytesExceeded, and no later page is
// requested. A tool and a dropped tool (Page.Dropped, counted after the
// page's tools) are one item each, and so is each raw item of the other
// kinds. A raw item counts its length; a dropped tool its name and reason
// plus 16; a tool its name, title and description plus 32, plus the sizes
// of its inputSchema, _meta and outputSchema as compact JSON (and 96 plus
// the title's length for its annotations), estimated from the decoded
// values without encoding them (a string its length plus 2, a number 8
// bytes, a value nested over 10,001 levels more than any bound). Each next
// cursor counts its length too. A kind whose list ends exactly at a bound
// is complete; one whose last kept page still has a next cursor when the
// items are used up is PartialItemsExceeded.
//
// A failed page request stops its kind (PartialListFailed, or
// PartialPageTimeout when the per-page timeout fired while ctx had not
// ended) and Discover goes on with the next kind. err is the first such
// error: the session's error as it returned it (a *refusal.Error by the
// port's contract), a *refusal.Error of Class Transient and Reason
// "page_timeout" when the page timed out and the session's error was not
// a *refusal.Error, or ctx.Err() once ctx has ended, in which case every
// kind not yet drained is marked PartialListFailed without a request. The
// Lists returned with an error still hold what was gathered and the
// partial marks.
//
// Discover makes its page requests one at a time; it is safe to call
// concurrently on a Session that is. While it fetches a page it narrows
// the tools of the previous one on a goroutine of its own, which has ended
// when it returns; Build then uses those narrowed schemas.
func Discover(ctx context.Context, sess ports.Session, opts *DiscoverOptions) (Lists, error) {
	b := bounds{maxPages: DefaultMaxPages, timeout: DefaultPageTimeout, maxItems: DefaultMaxItems, maxBytes: DefaultMaxBytes}
	if opts != nil {
		if opts.MaxPages > 0 {
			b.maxPages = opts.MaxPages
		}
		if opts.PageTimeout > 0 {
			b.timeout = opts.PageTimeout
		}
		if opts.MaxItems > 0 {
			b.maxItems = opts.MaxItems
		}
		if opts.MaxBytes > 0 {
			b.maxBytes = min(opts.MaxBytes, maxBytesCap)
		}
	}
	id := sess.Identity()
	var l Lists
	var first error
	mark := func(kind ports.ListKind, reason string) {
		if l.Partial == nil {
			l.Partial = make(map[ports.ListKind]string)
		}
		l.Partial[kind] = reason
	}
	var pr *preparer
	for _, kind := range listKinds {
		if !slices.Contains(id.Declared, kind) {
			continue
		}
		if err := ctx.Err(); err != nil {
			mark(kind, PartialListFailed)
			if first == nil {
				first = err
			}
			continue
		}
		if kind == ports.ListTools {
			pr = startPreparer()
			// Ends the goroutine when a panic (out of sess.List) leaves
			// Discover before finish; a no-op after it.
			defer pr.stop()
		}
		reason, err := drain(ctx, sess, id.ServerID, kind, b, &l, pr)
		if reason != "" {
			mark(kind, reason)
		}
		if err != nil && first == nil {
			first = err
		}
		if pr != nil {
			l.prepared = pr.finish(l.Tools)
			pr = nil
		}
	}
	return l, first
}

// maxBytesCap caps DiscoverOptions.MaxBytes (1 EiB is no bound in
// practice), so that the byte counts never overflow.
const maxBytesCap = 1 << 60

// bounds are the resolved DiscoverOptions.
type bounds struct {
	maxPages int
	timeout  time.Duration
	maxItems int
	maxBytes int64
}

// tally counts what one kind kept against its bounds.
type tally struct {
	bounds
	items int
	bytes int64
	// canon is toolSize's scratch; forms, when not nil, gets the
	// canonical forms of the raw input schemas of the tools counted.
	canon canon
	forms *pageForms
}

// take counts one item of size bytes, or returns the Partial* reason when
// it does not fit.
func (t *tally) take(size int64) string {
	if t.items >= t.maxItems {
		return PartialItemsExceeded
	}
	if size > t.maxBytes-t.bytes {
		return PartialBytesExceeded
	}
	t.items++
	t.bytes += size
	return ""
}

// takeTools counts the tools in order and returns how many fit, and the
// Partial* reason when not all did.
func (t *tally) takeTools(tools []ports.ToolItem) (int, string) {
	for i := range tools {
		if t.items >= t.maxItems { // before the walk of toolSize
			return i, PartialItemsExceeded
		}
		if r := t.take(toolSizeForms(&tools[i], t.maxBytes-t.bytes, &t.canon, t.forms)); r != "" {
			return i, r
		}
	}
	return len(tools), ""
}

// takeDropped counts the dropped tools in order like takeTools.
func (t *tally) takeDropped(dropped []ports.DroppedTool) (int, string) {
	for i, d := range dropped {
		if r := t.take(sizeDropped + int64(len(d.Name)) + int64(len(d.Reason))); r != "" {
			return i, r
		}
	}
	return len(dropped), ""
}

// takeRaw counts the raw items in order like takeTools.
func (t *tally) takeRaw(items []json.RawMessage) (int, string) {
	for i, it := range items {
		if r := t.take(int64(len(it))); r != "" {
			return i, r
		}
	}
	return len(items), ""
}

// drain fetches the pages of one kind into l and returns the Partial*
// reason when it stopped early, and the page error that stopped it.
// Each tools page is handed to pr to be narrowed meanwhile.
func drain(ctx context.Context, sess ports.Session, serverID string, kind ports.ListKind, b bounds, l *Lists, pr *preparer) (string, error) {
	var hint *ports.CacheHint
	defer func() {
		if hint != nil {
			if l.Cache == nil {
				l.Cache = make(map[ports.ListKind]ports.CacheHint)
			}
			l.Cache[kind] = *hint
		}
	}()
	seen := make(map[string]struct{})
	cursor := ""
	t := tally{bounds: b}
	for pages := 0; ; pages++ {
		if pages == b.maxPages {
			return PartialPageLimit, nil
		}
		if err := ctx.Err(); err != nil {
			return PartialListFailed, err
		}
		pctx, cancel := context.WithTimeout(ctx, b.timeout)
		page, err := sess.List(pctx, kind, cursor)
		timedOut := errors.Is(pctx.Err(), context.DeadlineExceeded)
		cancel()
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return PartialListFailed, cerr
			}
			if timedOut {
				var re *refusal.Error
				if !errors.As(err, &re) {
					err = &refusal.Error{Class: refusal.Transient, Reason: PartialPageTimeout, Server: serverID}
				}
				return PartialPageTimeout, err
			}
			return PartialListFailed, err
		}
		if page.Cache != nil {
			h := *page.Cache
			if hint != nil {
				h = CombineCache(*hint, h)
			}
			hint = &h
		}
		var over string
		if kind == ports.ListTools {
			t.forms = pr.forms()
			n, r := t.takeTools(page.Tools)
			over = r
			l.Tools = appendTools(l.Tools, page.Tools[:n])
			pr.add(page.Tools[:n], t.forms)
			t.forms = nil
			if over == "" {
				n, over = t.takeDropped(page.Dropped)
				l.Dropped = append(l.Dropped, page.Dropped[:n]...)
			}
		} else {
			items := &l.Prompts
			switch kind {
			case ports.ListResources:
				items = &l.Resources
			case ports.ListResourceTemplates:
				items = &l.ResourceTemplates
			}
			n, r := t.takeRaw(page.Items)
			over = r
			*items = append(*items, page.Items[:n]...)
		}
		if over != "" {
			return over, nil
		}
		if page.NextCursor == "" {
			return "", nil
		}
		if t.items >= t.maxItems {
			return PartialItemsExceeded, nil
		}
		if int64(len(page.NextCursor)) > t.maxBytes-t.bytes {
			return PartialBytesExceeded, nil
		}
		t.bytes += int64(len(page.NextCursor))
		seen[cursor] = struct{}{}
		if _, again := seen[page.NextCursor]; again {
			return PartialRepeatedCursor, nil
		}
		cursor = page.NextCursor
	}
}

// appendTools appends page to tools, doubling the capacity when it must
// grow: append's growth of a large slice (a quarter at a time) copied a
// 10,000-tool listing's items about five times over; doubling copies
// them about twice.
func appendTools(tools, page []ports.ToolItem) []ports.ToolItem {
	if need := len(tools) + len(page); need > cap(tools) {
		grown := make([]ports.ToolItem, len(tools), max(need, 2*cap(tools)))
		copy(grown, tools)
		tools = grown
	}
	return append(tools, page...)
}

// CombineCache is the caching hint of a list made of pages with hints a
// and b: the shorter TTL, private when either is, bounded when either was.
func CombineCache(a, b ports.CacheHint) ports.CacheHint {
	return ports.CacheHint{TTL: min(a.TTL, b.TTL), Private: a.Private || b.Private, Bounded: a.Bounded || b.Bounded}
}
