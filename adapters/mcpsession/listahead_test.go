package mcpsession

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// pagedPeer serves three tools pages, "" → "p1" → "p2" → the end, and
// lets a test hold or refuse the answer to one cursor.
type pagedPeer struct {
	mu      sync.Mutex
	hold    map[string]chan struct{} // answered once closed
	reject  map[string]bool
	started map[string]int // requests received, by cursor
}

func (pp *pagedPeer) handle(method string, params json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
	if method != "tools/list" {
		return textResult, nil
	}
	var p struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(params, &p)
	pp.mu.Lock()
	if pp.started == nil {
		pp.started = map[string]int{}
	}
	pp.started[p.Cursor]++
	hold, reject := pp.hold[p.Cursor], pp.reject[p.Cursor]
	pp.mu.Unlock()
	if hold != nil {
		<-hold
	}
	if reject {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no " + canary}
	}
	next := map[string]string{"": "p1", "p1": "p2"}[p.Cursor]
	b, _ := json.Marshal(map[string]any{"tools": []any{map[string]any{"name": "t" + p.Cursor, "inputSchema": map[string]any{"type": "object"}}}, "nextCursor": next})
	return b, nil
}

func (pp *pagedPeer) count(cursor string) int {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.started[cursor]
}

// cancelledIDs returns the request ids the client sent
// notifications/cancelled for.
func cancelledIDs(rec *writeRecorder) []any {
	var ids []any
	for _, c := range rec.requests("notifications/cancelled") {
		var cp struct{ RequestID any }
		if json.Unmarshal(c.Params, &cp) == nil {
			ids = append(ids, cp.RequestID)
		}
	}
	return ids
}

// TestListAhead: a listing's next page is asked for as soon as a page is
// in, before the next List, never more than one page ahead and never
// after the last page; each List takes its page ahead, and the pages are
// those of the SDK's path.
func TestListAhead(t *testing.T) {
	for _, version := range []string{"2025-11-25", ModernProtocolVersion} {
		t.Run(version, func(t *testing.T) {
			var pages [2][]ports.Page
			for i, sdk := range []bool{true, false} {
				pp := &pagedPeer{}
				s, _, rec := rawPeer(t, version, nil, ports.Signals{}, sdk, pp.handle)
				cursor := ""
				for n := 0; n < 3; n++ {
					page, err := s.List(context.Background(), ports.ListTools, cursor)
					require.NoError(t, err)
					pages[i] = append(pages[i], page)
					if !sdk && page.NextCursor != "" {
						require.Eventually(t, func() bool { return pp.count(page.NextCursor) == 1 }, 5*time.Second, time.Millisecond,
							"page %q asked for before its List", page.NextCursor)
						time.Sleep(20 * time.Millisecond)
						after := map[string]string{"p1": "p2", "p2": "p3"}[page.NextCursor]
						assert.Zero(t, pp.count(after), "never two pages ahead")
					}
					cursor = page.NextCursor
				}
				require.Empty(t, cursor)
				time.Sleep(20 * time.Millisecond)
				for _, c := range []string{"", "p1", "p2"} {
					assert.Equal(t, 1, pp.count(c), "one request per page (%q)", c)
				}
				assert.Len(t, rec.requests("tools/list"), 3, "nothing after the last page")
				assert.Empty(t, cancelledIDs(rec))
			}
			assert.Equal(t, pages[0], pages[1])
		})
	}
}

// TestListAheadDropped: a page ahead is dropped — its request cancelled
// at the server when it is still in flight (its response, if one comes,
// read and discarded), no goroutine left — when the next List asks for
// another cursor, when no List asks for it within the page timeout of the
// List that started it, when the page that started it does not decode,
// and when the session closes; a List of its cursor afterwards asks for
// it again.
func TestListAheadDropped(t *testing.T) {
	for _, tc := range []string{"other_cursor", "page_timeout", "bad_page", "close"} {
		t.Run(tc, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // after the peer's own cleanup
			release := make(chan struct{})
			pp := &pagedPeer{hold: map[string]chan struct{}{"p1": release}}
			s, _, rec := rawPeer(t, "2025-11-25", nil, ports.Signals{}, false, func(m string, p json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
				if tc == "bad_page" && string(p) == "{}" {
					return json.RawMessage(`{"tools":[{"name":1}],"nextCursor":"p1"}`), nil
				}
				return pp.handle(m, p)
			})
			ctx := context.Background()
			if tc == "page_timeout" {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
			}
			_, err := s.List(ctx, ports.ListTools, "")
			if tc == "bad_page" {
				requireRefusal(t, err, refusal.Protocol, "malformed_reply")
			} else {
				require.NoError(t, err)
			}
			cancelled := func() bool {
				lists := listsOf(rec, "p1")
				if len(lists) == 0 {
					return tc == "bad_page" // dropped before it was sent
				}
				for _, id := range cancelledIDs(rec) {
					if id == lists[0].ID.Raw() {
						return true
					}
				}
				return false
			}
			switch tc {
			case "other_cursor":
				// The peer answers in order: p1's answer comes first and
				// is read and discarded.
				require.Eventually(t, func() bool { return pp.count("p1") == 1 }, 5*time.Second, time.Millisecond)
				close(release)
				page, err := s.List(context.Background(), ports.ListTools, "p2")
				require.NoError(t, err)
				assert.Equal(t, "tp2", page.Tools[0].Name)
				page, err = s.List(context.Background(), ports.ListTools, "p1")
				require.NoError(t, err)
				assert.Equal(t, "tp1", page.Tools[0].Name)
				assert.Equal(t, 2, pp.count("p1"), "asked for again")
				require.NoError(t, s.Close())
				return
			case "close":
				require.Eventually(t, func() bool { return pp.count("p1") == 1 }, 5*time.Second, time.Millisecond)
				require.NoError(t, s.Close())
				close(release)
				return // the connection is gone: nothing to cancel
			}
			require.Eventually(t, cancelled, 5*time.Second, 5*time.Millisecond, "the page ahead is cancelled at the server")
			before := len(listsOf(rec, "p1"))
			close(release) // a dropped page's answer is discarded
			page, err := s.List(context.Background(), ports.ListTools, "p1")
			require.NoError(t, err)
			assert.Equal(t, "tp1", page.Tools[0].Name)
			assert.Equal(t, before+1, len(listsOf(rec, "p1")), "asked for again")
			require.NoError(t, s.Close())
		})
	}
}

// TestListAheadOutcomes: a page ahead's failure is the List's that asks
// for it, refused as it would be without the page ahead; a List whose
// context ends while it waits for its page ahead is abandoned as today.
func TestListAheadOutcomes(t *testing.T) {
	t.Run("error_reply", func(t *testing.T) {
		pp := &pagedPeer{reject: map[string]bool{"p1": true}}
		s, _, _ := rawPeer(t, "2025-11-25", nil, ports.Signals{}, false, pp.handle)
		_, err := s.List(context.Background(), ports.ListTools, "")
		require.NoError(t, err)
		require.Eventually(t, func() bool { return pp.count("p1") == 1 }, 5*time.Second, time.Millisecond)
		_, err = s.List(context.Background(), ports.ListTools, "p1")
		requireRefusal(t, err, refusal.Protocol, "list_rejected")
		assertNoCanary(t, err)
		assert.Equal(t, 1, pp.count("p1"), "the page ahead's own outcome")
	})
	t.Run("abandoned", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		pp := &pagedPeer{hold: map[string]chan struct{}{"p1": release}}
		s, _, rec := rawPeer(t, "2025-11-25", nil, ports.Signals{}, false, pp.handle)
		_, err := s.List(context.Background(), ports.ListTools, "")
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err = s.List(ctx, ports.ListTools, "p1")
		requireRefusal(t, err, refusal.Transient, "list_abandoned")
		aheadID := listsOf(rec, "p1")[0].ID.Raw()
		require.Eventually(t, func() bool {
			for _, id := range cancelledIDs(rec) {
				if id == aheadID {
					return true
				}
			}
			return false
		}, 5*time.Second, 5*time.Millisecond)
	})
}
