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
)

// DiscoverOptions bounds Discover. nil means the defaults.
type DiscoverOptions struct {
	// MaxPages is the page bound per list kind; 0 (or less) means
	// DefaultMaxPages.
	MaxPages int
	// PageTimeout bounds each page request; 0 (or less) means
	// DefaultPageTimeout.
	PageTimeout time.Duration
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

	// prepared is the narrowing Discover did page by page, which Build
	// uses for this very Tools slice instead of narrowing again.
	prepared *preparedTools
}

// listKinds are the list kinds Discover drains, in order.
var listKinds = [...]ports.ListKind{ports.ListTools, ports.ListPrompts, ports.ListResources, ports.ListResourceTemplates}

// Discover drains, page by page, every list kind sess.Identity().Declared
// names, and never calls the list method of an undeclared kind. Each kind
// is bounded by opts.MaxPages pages, a per-page timeout of opts.PageTimeout
// on a ctx derived from ctx, and repeated-cursor detection: a next cursor
// already requested for that kind stops it. A kind that stops early is in
// Lists.Partial with a Partial* reason and keeps the items gathered so
// far; a partial list is never reported complete.
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
	maxPages, timeout := DefaultMaxPages, DefaultPageTimeout
	if opts != nil {
		if opts.MaxPages > 0 {
			maxPages = opts.MaxPages
		}
		if opts.PageTimeout > 0 {
			timeout = opts.PageTimeout
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
		}
		reason, err := drain(ctx, sess, id.ServerID, kind, maxPages, timeout, &l, pr)
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

// drain fetches the pages of one kind into l and returns the Partial*
// reason when it stopped early, and the page error that stopped it.
// Each tools page is handed to pr to be narrowed meanwhile.
func drain(ctx context.Context, sess ports.Session, serverID string, kind ports.ListKind, maxPages int, timeout time.Duration, l *Lists, pr *preparer) (string, error) {
	seen := make(map[string]struct{})
	cursor := ""
	for pages := 0; ; pages++ {
		if pages == maxPages {
			return PartialPageLimit, nil
		}
		if err := ctx.Err(); err != nil {
			return PartialListFailed, err
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
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
		if kind == ports.ListTools {
			l.Tools = append(l.Tools, page.Tools...)
			l.Dropped = append(l.Dropped, page.Dropped...)
			pr.add(page.Tools)
		} else {
			items := &l.Prompts
			switch kind {
			case ports.ListResources:
				items = &l.Resources
			case ports.ListResourceTemplates:
				items = &l.ResourceTemplates
			}
			*items = append(*items, page.Items...)
		}
		if page.NextCursor == "" {
			return "", nil
		}
		seen[cursor] = struct{}{}
		if _, again := seen[page.NextCursor]; again {
			return PartialRepeatedCursor, nil
		}
		cursor = page.NextCursor
	}
}
