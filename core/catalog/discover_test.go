package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

var allKinds = []ports.ListKind{ports.ListTools, ports.ListPrompts, ports.ListResources, ports.ListResourceTemplates}

// chain returns n pages of kind: cursors "", "c1", ... "c<n-1>", one item
// each, the last ending pagination.
func chain(kind ports.ListKind, n int) map[string]ports.Page {
	pages := make(map[string]ports.Page, n)
	for i := range n {
		cursor := ""
		if i > 0 {
			cursor = "c" + strconv.Itoa(i)
		}
		p := ports.Page{}
		if i < n-1 {
			p.NextCursor = "c" + strconv.Itoa(i+1)
		}
		if kind == ports.ListTools {
			p.Tools = []ports.ToolItem{{Name: fmt.Sprintf("t%d", i), InputSchema: map[string]any{}}}
		} else {
			p.Items = []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"name":"p%d","uri":"u%d","uriTemplate":"t%d"}`, i, i, i))}
		}
		pages[cursor] = p
	}
	return pages
}

// connect opens a portstest session for script.
func connect(t *testing.T, script portstest.SessionScript) *portstest.Session {
	t.Helper()
	sess, err := portstest.NewConnector(script).Connect(context.Background(), ports.Target{ServerID: "srv"}, ports.Signals{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close() })
	return sess.(*portstest.Session)
}

// listFunc is a portstest session whose List is replaced, for pages a
// script cannot express (endless, blocking).
type listFunc struct {
	*portstest.Session
	list func(ctx context.Context, kind ports.ListKind, cursor string) (ports.Page, error)
}

func (s listFunc) List(ctx context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
	return s.list(ctx, kind, cursor)
}

func requested(s *portstest.Session) map[ports.ListKind]int {
	out := map[ports.ListKind]int{}
	for _, r := range s.Lists() {
		out[r.Kind]++
	}
	return out
}

func TestDiscoverPagination(t *testing.T) {
	tests := []struct {
		name     string
		pages    map[string]ports.Page
		opts     *DiscoverOptions
		tools    int
		requests int
		partial  string
	}{
		{"one page", chain(ports.ListTools, 1), nil, 1, 1, ""},
		{"1,000 pages exactly is complete", chain(ports.ListTools, 1000), nil, 1000, 1000, ""},
		{"1,001 pages stop at the bound", chain(ports.ListTools, 1001), nil, 1000, 1000, PartialPageLimit},
		{"MaxPages option", chain(ports.ListTools, 10), &DiscoverOptions{MaxPages: 3}, 3, 3, PartialPageLimit},
		{"MaxPages equal to the pages", chain(ports.ListTools, 3), &DiscoverOptions{MaxPages: 3}, 3, 3, ""},
		{"repeated cursor", func() map[string]ports.Page {
			p := chain(ports.ListTools, 4)
			last := p["c3"]
			last.NextCursor = "c1"
			p["c3"] = last
			return p
		}(), nil, 4, 4, PartialRepeatedCursor},
		{"cursor repeating itself", map[string]ports.Page{
			"":   {Tools: []ports.ToolItem{{Name: "t0"}}, NextCursor: "c1"},
			"c1": {Tools: []ports.ToolItem{{Name: "t1"}}, NextCursor: "c1"},
		}, nil, 2, 2, PartialRepeatedCursor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := connect(t, portstest.SessionScript{
				Identity: ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools}},
				Pages:    map[ports.ListKind]map[string]ports.Page{ports.ListTools: tt.pages},
			})
			l, err := Discover(context.Background(), sess, tt.opts)
			require.NoError(t, err)
			assert.Len(t, l.Tools, tt.tools)
			assert.Len(t, sess.Lists(), tt.requests)
			if tt.partial == "" {
				assert.Empty(t, l.Partial)
			} else {
				assert.Equal(t, map[ports.ListKind]string{ports.ListTools: tt.partial}, l.Partial)
			}
			if tt.tools > 1 {
				assert.Equal(t, "t0", l.Tools[0].Name, "server order kept")
			}
		})
	}
}

func TestDiscoverAllKinds(t *testing.T) {
	pages := map[ports.ListKind]map[string]ports.Page{}
	for _, k := range allKinds {
		pages[k] = chain(k, 3)
	}
	pages[ports.ListTools]["c1"] = ports.Page{
		Tools:      pages[ports.ListTools]["c1"].Tools,
		Dropped:    []ports.DroppedTool{{Name: "x", Reason: "invalid_header_annotation"}},
		NextCursor: "c2",
	}
	sess := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: allKinds}, Pages: pages})
	l, err := Discover(context.Background(), sess, nil)
	require.NoError(t, err)
	assert.Len(t, l.Tools, 3)
	assert.Len(t, l.Prompts, 3)
	assert.Len(t, l.Resources, 3)
	assert.Len(t, l.ResourceTemplates, 3)
	assert.Equal(t, []ports.DroppedTool{{Name: "x", Reason: "invalid_header_annotation"}}, l.Dropped)
	assert.Nil(t, l.Partial)

	cat := Build("srv", sess.Identity(), l, nil, nil)
	assert.True(t, cat.Complete())
	assert.Len(t, cat.Tools, 3)
	assert.Len(t, cat.Prompts, 3)
}

func TestDiscoverNeverCallsUndeclared(t *testing.T) {
	pages := map[ports.ListKind]map[string]ports.Page{}
	for _, k := range allKinds {
		pages[k] = chain(k, 2)
	}
	for _, declared := range [][]ports.ListKind{
		nil,
		{ports.ListPrompts},
		{ports.ListResources, "bogus"},
		{ports.ListTools, ports.ListTools},
	} {
		t.Run(fmt.Sprint(declared), func(t *testing.T) {
			sess := connect(t, portstest.SessionScript{
				Identity:   ports.SessionIdentity{Declared: declared},
				Pages:      pages,
				Undeclared: func(ports.ListKind) error { t.Error("undeclared kind listed"); return errors.New("undeclared") },
			})
			l, err := Discover(context.Background(), sess, nil)
			require.NoError(t, err)
			assert.Nil(t, l.Partial)
			want := map[ports.ListKind]int{}
			for _, k := range declared {
				if k != "bogus" {
					want[k] = 2
				}
			}
			assert.Equal(t, want, requested(sess))
		})
	}
}

func TestDiscoverEndlessCursor(t *testing.T) {
	base := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools, ports.ListPrompts}}})
	calls := 0
	sess := listFunc{base, func(ctx context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
		if kind == ports.ListPrompts {
			return ports.Page{Items: []json.RawMessage{json.RawMessage(`{"name":"p"}`)}}, nil
		}
		calls++
		return ports.Page{Tools: []ports.ToolItem{{Name: "t" + cursor}}, NextCursor: "next-" + strconv.Itoa(calls)}, nil
	}}
	l, err := Discover(context.Background(), sess, nil)
	require.NoError(t, err)
	assert.Equal(t, DefaultMaxPages, calls)
	assert.Len(t, l.Tools, DefaultMaxPages)
	assert.Len(t, l.Prompts, 1, "the next kind is still drained")
	assert.Equal(t, map[ports.ListKind]string{ports.ListTools: PartialPageLimit}, l.Partial)

	cat := Build("srv", base.Identity(), l, nil, nil)
	assert.False(t, cat.Complete(), "a partial catalog is never complete")
	assert.Equal(t, l.Partial, cat.Partial)
}

func TestDiscoverPageTimeout(t *testing.T) {
	sessionErr := refusal.New(refusal.Transient, "request_timeout", "srv")
	for _, tt := range []struct {
		name    string
		onBlock func(ctx context.Context) error
		want    error
	}{
		{"session returns the ctx error", func(ctx context.Context) error { return ctx.Err() },
			refusal.New(refusal.Transient, PartialPageTimeout, "")},
		{"session returns its own refusal", func(context.Context) error { return sessionErr }, sessionErr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools, ports.ListPrompts}}})
			sess := listFunc{base, func(ctx context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
				switch {
				case kind == ports.ListPrompts:
					return ports.Page{Items: []json.RawMessage{json.RawMessage(`{"name":"p"}`)}}, nil
				case cursor == "":
					return ports.Page{Tools: []ports.ToolItem{{Name: "a"}}, NextCursor: "slow"}, nil
				}
				_, hasDeadline := ctx.Deadline()
				require.True(t, hasDeadline, "each page has its own deadline")
				<-ctx.Done()
				return ports.Page{}, tt.onBlock(ctx)
			}}
			start := time.Now()
			l, err := Discover(context.Background(), sess, &DiscoverOptions{PageTimeout: 20 * time.Millisecond})
			assert.Less(t, time.Since(start), 5*time.Second)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want)
			assert.Equal(t, refusal.Transient, refusal.ClassOf(err))
			var re *refusal.Error
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "srv", re.Server)
			assert.Equal(t, map[ports.ListKind]string{ports.ListTools: PartialPageTimeout}, l.Partial)
			assert.Len(t, l.Tools, 1, "items gathered before the timeout are kept")
			assert.Len(t, l.Prompts, 1, "the next kind is still drained")
		})
	}
}

func TestDiscoverFailingPage(t *testing.T) {
	errA := refusal.New(refusal.Transient, "connection_lost", "srv")
	errB := refusal.New(refusal.Protocol, "malformed_reply", "srv")
	pages := map[ports.ListKind]map[string]ports.Page{}
	for _, k := range allKinds {
		pages[k] = chain(k, 3)
	}
	t.Run("second page fails once", func(t *testing.T) {
		sess := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: allKinds}, Pages: pages})
		sess.FailOnce("List", nil)
		sess.FailOnce("List", errA)
		l, err := Discover(context.Background(), sess, nil)
		assert.Same(t, errA, err)
		assert.Equal(t, map[ports.ListKind]string{ports.ListTools: PartialListFailed}, l.Partial)
		assert.Len(t, l.Tools, 1)
		assert.Len(t, l.Prompts, 3)
		assert.Len(t, l.Resources, 3)
		assert.Len(t, l.ResourceTemplates, 3)
	})
	t.Run("every page fails, the first error is returned", func(t *testing.T) {
		sess := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: allKinds}, Pages: pages})
		sess.FailOnce("List", errB)
		sess.Fail("List", errA)
		l, err := Discover(context.Background(), sess, nil)
		assert.Same(t, errB, err)
		assert.Equal(t, map[ports.ListKind]string{
			ports.ListTools: PartialListFailed, ports.ListPrompts: PartialListFailed,
			ports.ListResources: PartialListFailed, ports.ListResourceTemplates: PartialListFailed,
		}, l.Partial)
		assert.Equal(t, 4, sess.Calls("List"))
		cat := Build("srv", sess.Identity(), l, nil, nil)
		assert.False(t, cat.Complete())
	})
	t.Run("closed session", func(t *testing.T) {
		sess := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools}}, Pages: pages})
		sess.Disconnect()
		l, err := Discover(context.Background(), sess, nil)
		assert.ErrorIs(t, err, portstest.ErrSessionClosed)
		assert.Equal(t, map[ports.ListKind]string{ports.ListTools: PartialListFailed}, l.Partial)
	})
}

func TestDiscoverContextEnded(t *testing.T) {
	pages := map[ports.ListKind]map[string]ports.Page{}
	for _, k := range allKinds {
		pages[k] = chain(k, 5)
	}
	allFailed := map[ports.ListKind]string{
		ports.ListTools: PartialListFailed, ports.ListPrompts: PartialListFailed,
		ports.ListResources: PartialListFailed, ports.ListResourceTemplates: PartialListFailed,
	}
	t.Run("cancelled before", func(t *testing.T) {
		sess := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: allKinds}, Pages: pages})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		l, err := Discover(ctx, sess, nil)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, sess.Lists(), "no request after ctx ended")
		assert.Equal(t, allFailed, l.Partial)
	})
	t.Run("cancelled during a page", func(t *testing.T) {
		base := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: allKinds}, Pages: pages})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		sess := listFunc{base, func(lctx context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
			if cursor == "c3" {
				cancel()
				<-lctx.Done()
				return ports.Page{}, refusal.New(refusal.Transient, "cancelled", "srv")
			}
			return base.List(lctx, kind, cursor)
		}}
		l, err := Discover(ctx, sess, nil)
		assert.ErrorIs(t, err, context.Canceled, "ctx.Err() once ctx ended")
		assert.Len(t, l.Tools, 3, "pages before are kept")
		assert.Equal(t, allFailed, l.Partial)
		assert.Equal(t, map[ports.ListKind]int{ports.ListTools: 3}, requested(base))
	})
	t.Run("deadline of the caller is not a page timeout", func(t *testing.T) {
		base := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools}}, Pages: pages})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		sess := listFunc{base, func(lctx context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
			<-lctx.Done()
			return ports.Page{}, lctx.Err()
		}}
		l, err := Discover(ctx, sess, &DiscoverOptions{PageTimeout: time.Hour})
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, map[ports.ListKind]string{ports.ListTools: PartialListFailed}, l.Partial)
	})
}

func TestDiscoverPreparesNarrowing(t *testing.T) {
	pages := map[string]ports.Page{
		"": {Tools: []ports.ToolItem{
			{Name: "a", InputSchema: decode(t, `{"type":"object","properties":{"x":{"anyOf":[]}}}`)},
			{Name: "bad", InputSchema: decode(t, `{"type":"array"}`)},
		}, NextCursor: "c1"},
		"c1": {Tools: []ports.ToolItem{
			{Name: "b", InputSchema: decode(t, `{"properties":{"x":{"anyOf":[]}}}`)},
			{Name: "c", InputSchema: decode(t, `{"properties":{"y":{"type":"integer"}}}`)},
		}},
	}
	sess := connect(t, portstest.SessionScript{
		Identity: ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools}},
		Pages:    map[ports.ListKind]map[string]ports.Page{ports.ListTools: pages},
	})
	l, err := Discover(context.Background(), sess, nil)
	require.NoError(t, err)
	require.True(t, l.prepared.matches(l.Tools))
	assert.Equal(t, int32(-1), l.prepared.ks[1], "a rejected schema is not narrowed")
	assert.Equal(t, l.prepared.ks[0], l.prepared.ks[2], "identical narrowed schemas shared")

	cat := Build("srv", sess.Identity(), l, nil, nil)
	require.Len(t, cat.Tools, 3)
	for i, name := range []string{"a", "b", "c"} {
		tool, ok := cat.Tool(ToolName("srv", name))
		require.True(t, ok)
		assert.Equal(t, uint32(l.prepared.ks[[]int{0, 2, 3}[i]]), tool.schemaID(), "Build used Discover's narrowing")
	}
	assert.Equal(t, []Diagnostic{
		{Tool: "a", Reason: DiagSchemaNarrowed, Paths: []string{"/properties/x"}},
		{Tool: "b", Reason: DiagSchemaNarrowed, Paths: []string{"/properties/x"}},
	}, cat.Diagnostics)
	assert.Equal(t, []Rejected{{"srv", ports.ListTools, "bad", ReasonInvalidInputSchema}}, cat.Rejected)

	// A Lists whose Tools were replaced is narrowed again, not matched to
	// stale entries.
	other := l
	other.Tools = slices.Clone(l.Tools)
	other.Tools[0].InputSchema = decode(t, `{"properties":{"z":{"type":"string"}}}`)
	cat2 := Build("srv", sess.Identity(), other, nil, nil)
	tool, ok := cat2.Tool("mcp__srv__a")
	require.True(t, ok)
	assert.Equal(t, `{"properties":{"z":{"type":"string"}},"type":"object"}`, string(tool.Spec().InputSchema))
}

// sizedTools returns n tools of one page, named t<first>..., each of
// exactly size bytes by toolSize (size ≥ sizeTool+12).
func sizedTools(first, n int, size int64) []ports.ToolItem {
	out := make([]ports.ToolItem, n)
	for i := range out {
		name := fmt.Sprintf("t%05d", first+i)
		// {"d":"<pad>"}: 2 braces, 4 and "d" for the member, 2 quotes.
		pad := int(size) - sizeTool - len(name) - 9
		out[i] = ports.ToolItem{Name: name, InputSchema: map[string]any{"d": strings.Repeat("x", pad)}}
	}
	return out
}

// sizedPages returns pages of per tools each (size bytes each), chained by
// cursors "c1", "c2", ... of cursorLen bytes.
func sizedPages(pages, per int, size int64, cursorLen int) map[string]ports.Page {
	cursor := func(i int) string {
		if i == 0 {
			return ""
		}
		c := fmt.Sprintf("c%d", i)
		return c + strings.Repeat("_", cursorLen-len(c))
	}
	out := map[string]ports.Page{}
	for i := range pages {
		p := ports.Page{Tools: sizedTools(i*per, per, size)}
		if i < pages-1 {
			p.NextCursor = cursor(i + 1)
		}
		out[cursor(i)] = p
	}
	return out
}

func rawItems(n, size int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(`{"name":"` + strings.Repeat("p", size-11) + `"}`)
	}
	return out
}

func TestDiscoverBounds(t *testing.T) {
	const size = 100 // bytes per tool
	deep := any("leaf")
	for range maxSizeDepth + 1 {
		deep = []any{deep}
	}
	type want struct {
		tools, dropped, prompts, requests int
		partial                           map[ports.ListKind]string
	}
	tools := func(reason string) map[ports.ListKind]string {
		return map[ports.ListKind]string{ports.ListTools: reason}
	}
	for _, tt := range []struct {
		name  string
		pages map[ports.ListKind]map[string]ports.Page
		opts  *DiscoverOptions
		want  want
	}{
		{"items within one page",
			map[ports.ListKind]map[string]ports.Page{ports.ListTools: sizedPages(1, 10, size, 2)},
			&DiscoverOptions{MaxItems: 4}, want{tools: 4, requests: 1, partial: tools(PartialItemsExceeded)}},
		{"items across pages",
			map[ports.ListKind]map[string]ports.Page{ports.ListTools: sizedPages(3, 2, size, 2)},
			&DiscoverOptions{MaxItems: 3}, want{tools: 3, requests: 2, partial: tools(PartialItemsExceeded)}},
		{"items used up with a next cursor: no further request",
			map[ports.ListKind]map[string]ports.Page{ports.ListTools: sizedPages(3, 2, size, 2)},
			&DiscoverOptions{MaxItems: 4}, want{tools: 4, requests: 2, partial: tools(PartialItemsExceeded)}},
		{"items exactly at the end of the list are complete",
			map[ports.ListKind]map[string]ports.Page{ports.ListTools: sizedPages(3, 2, size, 2)},
			&DiscoverOptions{MaxItems: 6}, want{tools: 6, requests: 3}},
		{"dropped tools are items",
			map[ports.ListKind]map[string]ports.Page{ports.ListTools: {"": {
				Tools:   sizedTools(0, 2, size),
				Dropped: []ports.DroppedTool{{Name: "d1", Reason: "r"}, {Name: "d2", Reason: "r"}},
			}}},
			&DiscoverOptions{MaxItems: 3}, want{tools: 2, dropped: 1, requests: 1, partial: tools(PartialItemsExceeded)}},
		{"bytes within one page",
			map[ports.ListKind]map[string]ports.Page{ports.ListTools: sizedPages(1, 10, size, 2)},
			&DiscoverOptions{MaxBytes: 3*size + size/2}, want{tools: 3, requests: 1, partial: tools(PartialBytesExceeded)}},
		{"bytes across pages, cursors counted",
			map[ports.ListKind]map[string]ports.Page{ports.ListTools: sizedPages(3, 2, size, 10)},
			&DiscoverOptions{MaxBytes: 4*size + 10}, want{tools: 4, requests: 2, partial: tools(PartialBytesExceeded)}},
		{"bytes exactly at the end of the list are complete",
			map[ports.ListKind]map[string]ports.Page{ports.ListTools: sizedPages(3, 2, size, 10)},
			&DiscoverOptions{MaxBytes: 6*size + 2*10}, want{tools: 6, requests: 3}},
		{"a cursor over the bound stops the list",
			map[ports.ListKind]map[string]ports.Page{ports.ListTools: sizedPages(2, 2, size, 1000)},
			&DiscoverOptions{MaxBytes: 2*size + 999}, want{tools: 2, requests: 1, partial: tools(PartialBytesExceeded)}},
		{"one tool larger than the bound",
			map[ports.ListKind]map[string]ports.Page{ports.ListTools: {"": {Tools: sizedTools(0, 1, 10_000)}}},
			&DiscoverOptions{MaxBytes: 9_999}, want{requests: 1, partial: tools(PartialBytesExceeded)}},
		{"a value nested too deep is over any bound",
			map[ports.ListKind]map[string]ports.Page{ports.ListTools: {"": {Tools: []ports.ToolItem{
				{Name: "t00000", InputSchema: map[string]any{}}, {Name: "deep", InputSchema: map[string]any{"default": deep}},
			}}}},
			nil, want{tools: 1, requests: 1, partial: tools(PartialBytesExceeded)}},
		{"raw items by their length, each kind on its own",
			map[ports.ListKind]map[string]ports.Page{
				ports.ListTools:   sizedPages(1, 5, size, 2),
				ports.ListPrompts: {"": {Items: rawItems(5, 20)}},
			},
			&DiscoverOptions{MaxBytes: 5 * size}, want{tools: 5, prompts: 5, requests: 2}},
		{"raw items over the bound",
			map[ports.ListKind]map[string]ports.Page{ports.ListPrompts: {"": {Items: rawItems(5, 20)}}},
			&DiscoverOptions{MaxBytes: 59}, want{prompts: 2, requests: 1,
				partial: map[ports.ListKind]string{ports.ListPrompts: PartialBytesExceeded}}},
		{"DefaultMaxItems",
			map[ports.ListKind]map[string]ports.Page{ports.ListPrompts: {"": {Items: rawItems(DefaultMaxItems+1, 12)}}},
			nil, want{prompts: DefaultMaxItems, requests: 1,
				partial: map[ports.ListKind]string{ports.ListPrompts: PartialItemsExceeded}}},
		{"DefaultMaxBytes",
			map[ports.ListKind]map[string]ports.Page{ports.ListPrompts: {"": {Items: func() []json.RawMessage {
				half := json.RawMessage(strings.Repeat(" ", DefaultMaxBytes/2))
				return []json.RawMessage{half, half, json.RawMessage(`{}`)}
			}()}}},
			nil, want{prompts: 2, requests: 1,
				partial: map[ports.ListKind]string{ports.ListPrompts: PartialBytesExceeded}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var declared []ports.ListKind
			for _, k := range allKinds {
				if tt.pages[k] != nil {
					declared = append(declared, k)
				}
			}
			sess := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: declared}, Pages: tt.pages})
			l, err := Discover(context.Background(), sess, tt.opts)
			require.NoError(t, err)
			assert.Len(t, l.Tools, tt.want.tools)
			assert.Len(t, l.Dropped, tt.want.dropped)
			assert.Len(t, l.Prompts, tt.want.prompts)
			assert.Len(t, sess.Lists(), tt.want.requests)
			assert.Equal(t, tt.want.partial, l.Partial)
			for i, tool := range l.Tools {
				assert.Equal(t, fmt.Sprintf("t%05d", i), tool.Name, "the server's first tools are kept")
			}

			// The bound reaches the catalog, which is not complete.
			cat := Build("srv", sess.Identity(), l, nil, nil)
			assert.Equal(t, tt.want.partial, cat.Partial)
			assert.Equal(t, tt.want.partial == nil, cat.Complete())
		})
	}
}

func TestToolSize(t *testing.T) {
	// The estimate of realistic tools is close to their compact JSON.
	for _, it := range decodeTools(t, realisticToolsJSON(20, true)) {
		b, err := json.Marshal(map[string]any{"name": it.Name, "description": it.Description, "inputSchema": it.InputSchema})
		require.NoError(t, err)
		got := toolSize(&it, math.MaxInt64/2)
		assert.InDelta(t, 1, float64(got)/float64(len(b)), 0.15, "estimate %d, JSON %d", got, len(b))
	}

	// Every part counts.
	base := toolSize(&ports.ToolItem{}, 1<<20)
	assert.Equal(t, int64(sizeTool+4), base, "a nil schema is null")
	for _, tc := range []struct {
		it   ports.ToolItem
		more int64
	}{
		{ports.ToolItem{Name: "nnnnn"}, 5},
		{ports.ToolItem{Title: "ttttt"}, 5},
		{ports.ToolItem{Description: "ddddd"}, 5},
		{ports.ToolItem{InputSchema: "xxxxx"}, 7 - 4},                                             // "xxxxx" for null
		{ports.ToolItem{InputSchema: map[string]any{"k": []any{1.5, true}}}, 24 - 4},              // {"k":[1.5,true]}: a number as 8, a comma per member and element
		{ports.ToolItem{InputSchema: json.Number("12345")}, 5 - 4},                                // UseNumber
		{ports.ToolItem{Meta: map[string]any{"k": nil}}, 10 + 1},                                  // {"k":null} and a comma
		{ports.ToolItem{InputSchema: map[string]any{"k": struct{}{}}}, 2 + 4 + 1 + sizeOther - 4}, // a Go value JSON does not make
		{ports.ToolItem{OutputSchema: map[string]any{"k": nil}}, 10 + 1},                          // likewise the output schema
		{ports.ToolItem{Annotations: &ports.ToolAnnotations{Title: "ttt"}}, sizeAnnotations + 3},
	} {
		assert.Equal(t, base+tc.more, toolSize(&tc.it, 1<<20), "%+v", tc.it)
	}

	// The walk stops past the limit; a cyclic value (which no decoder
	// makes) or one nested too deep is over any limit.
	huge := make([]any, 1<<16)
	assert.Greater(t, valueSize(huge, 0, 100, 0), int64(100))
	cyclic := map[string]any{}
	cyclic["a"] = cyclic
	assert.Greater(t, valueSize(cyclic, 0, maxBytesCap, 0), int64(maxBytesCap))
	var deep any = "x"
	for range maxSizeDepth - 1 {
		deep = []any{deep}
	}
	assert.Less(t, valueSize(deep, 0, 1<<20, 0), int64(1<<20), "as deep as JSON decodes is counted")
}

// TestDiscoverPanicStopsPreparer: a tools List that panics after a first
// page (a broken Session, or a bug under one) leaves no schema goroutine
// behind once the panic has left Discover.
func TestDiscoverPanicStopsPreparer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	base := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools}}})
	sess := listFunc{base, func(_ context.Context, _ ports.ListKind, cursor string) (ports.Page, error) {
		if cursor == "" {
			return ports.Page{Tools: []ports.ToolItem{{Name: "a", InputSchema: json.RawMessage(`{"type":"object"}`)}}, NextCursor: "next"}, nil
		}
		panic("list broke")
	}}
	assert.PanicsWithValue(t, "list broke", func() { _, _ = Discover(context.Background(), sess, nil) })
}

// TestDiscoverPreparerPanic: a panic while the schema goroutine narrows a
// page's schemas reaches Discover's caller (where a panic boundary such as
// the supervisor's can turn it into one server's failure), not the
// process; no goroutine is left behind.
func TestDiscoverPreparerPanic(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	saved := packPrepared
	t.Cleanup(func() { packPrepared = saved })
	packPrepared = func(*packer, *packer, any, []byte) (int32, int32, []string) { panic("pack broke") }
	pages := 0
	base := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools}}})
	sess := listFunc{base, func(_ context.Context, _ ports.ListKind, cursor string) (ports.Page, error) {
		pages++
		next := ""
		if pages < 20 {
			next = "more"
		}
		return ports.Page{Tools: []ports.ToolItem{{Name: "t" + strconv.Itoa(pages), InputSchema: map[string]any{"type": "object"}}}, NextCursor: next}, nil
	}}
	assert.PanicsWithValue(t, "pack broke", func() { _, _ = Discover(context.Background(), sess, nil) })
}

// TestDiscoverCache: a list's caching hint combines its pages' (the
// shortest TTL, private if any page is, bounded if any was); a list whose
// pages carry none (the legacy era) has none, and neither has a catalog
// built from it.
func TestDiscoverCache(t *testing.T) {
	hint := func(ttl time.Duration, private, bounded bool) *ports.CacheHint {
		return &ports.CacheHint{TTL: ttl, Private: private, Bounded: bounded}
	}
	tools := chain(ports.ListTools, 3)
	for cursor, ttl := range map[string]time.Duration{"": time.Minute, "c1": 10 * time.Second, "c2": time.Hour} {
		p := tools[cursor]
		p.Cache = hint(ttl, cursor == "c2", cursor == "")
		tools[cursor] = p
	}
	prompts := chain(ports.ListPrompts, 2)
	for cursor, p := range prompts {
		p.Cache = hint(0, false, false)
		prompts[cursor] = p
	}
	sess := connect(t, portstest.SessionScript{
		Identity: ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools, ports.ListPrompts, ports.ListResources}},
		Pages:    map[ports.ListKind]map[string]ports.Page{ports.ListTools: tools, ports.ListPrompts: prompts, ports.ListResources: chain(ports.ListResources, 2)},
	})
	l, err := Discover(context.Background(), sess, nil)
	require.NoError(t, err)
	assert.Equal(t, map[ports.ListKind]ports.CacheHint{
		ports.ListTools:   {TTL: 10 * time.Second, Private: true, Bounded: true},
		ports.ListPrompts: {},
	}, l.Cache)
	cat := Build("srv", sess.Identity(), l, nil, nil)
	assert.Equal(t, l.Cache, cat.Cache)
	assert.Equal(t, l.Cache, cat.MarkStale().Cache, "a stale copy keeps its hints")

	legacy := connect(t, portstest.SessionScript{Identity: ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools}}, Pages: map[ports.ListKind]map[string]ports.Page{ports.ListTools: chain(ports.ListTools, 2)}})
	l, err = Discover(context.Background(), legacy, nil)
	require.NoError(t, err)
	assert.Nil(t, l.Cache)
	assert.Nil(t, Build("srv", legacy.Identity(), l, nil, nil).Cache)
}

// TestAppendTools checks appendTools against append over pages of every
// size: the same items in order, never sharing the page's array, and the
// capacity at least doubled whenever it grows, so that a listing of n
// tools copies O(n) items in all.
func TestAppendTools(t *testing.T) {
	item := func(i int) ports.ToolItem { return ports.ToolItem{Name: "t" + strconv.Itoa(i)} }
	for _, size := range []int{0, 1, 7, 100, 300, 1000} {
		var got, want []ports.ToolItem
		n := 0
		for range 40 {
			page := make([]ports.ToolItem, size)
			for i := range page {
				page[i] = item(n)
				n++
			}
			before := cap(got)
			got = appendTools(got, page)
			want = append(want, page...)
			if cap(got) != before {
				assert.GreaterOrEqual(t, cap(got), 2*before, "page size %d: capacity %d grew to %d", size, before, cap(got))
			}
			if size > 0 {
				page[0].Name = "changed"
				assert.NotEqual(t, "changed", got[len(got)-size].Name, "page size %d: the result shares the page", size)
			}
		}
		assert.Equal(t, want, got, "page size %d", size)
	}
}
