package mcpsession

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// notifier sends progress notifications for the call req is serving.
type notifier func(token any, progress, total float64, message string) error

// progressServer is an in-process go-sdk server whose one tool "progress"
// runs h with a notifier; h's text result is the tool's content.
func progressServer(h func(ctx context.Context, token any, notify notifier) (string, error)) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "progress-server", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "progress", InputSchema: objSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			notify := func(token any, progress, total float64, message string) error {
				return req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Progress: progress, Total: total, Message: message,
				})
			}
			text, err := h(ctx, req.Params.GetProgressToken(), notify)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	return srv
}

// resultText returns the text of a one-item text result.
func resultText(t *testing.T, res ports.CallResult) string {
	t.Helper()
	var items []struct{ Text string }
	require.NoError(t, json.Unmarshal(res.Content, &items))
	require.Len(t, items, 1)
	return items[0].Text
}

// progressLog is a call's OnProgress that records what it gets and lets a
// server wait until it has n.
type progressLog struct {
	mu   sync.Mutex
	got  []ports.Progress
	more chan struct{}
}

func newProgressLog() *progressLog { return &progressLog{more: make(chan struct{}, 1)} }

func (l *progressLog) on(p ports.Progress) {
	l.mu.Lock()
	l.got = append(l.got, p)
	l.mu.Unlock()
	select {
	case l.more <- struct{}{}:
	default:
	}
}

func (l *progressLog) seen() []ports.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ports.Progress(nil), l.got...)
}

// await waits (in the server's handler) until n notifications arrived.
func (l *progressLog) await(ctx context.Context, n int) error {
	for len(l.seen()) < n {
		select {
		case <-l.more:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Second):
			return fmt.Errorf("only %d of %d progress notifications arrived", len(l.seen()), n)
		}
	}
	return nil
}

func TestCallProgress(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			log := newProgressLog()
			srv := progressServer(func(ctx context.Context, token any, notify notifier) (string, error) {
				// Foreign tokens first: a stale string, a number, none.
				for _, tok := range []any{progressTokenPrefix + "999999", 1, nil} {
					if err := notify(tok, 99, 100, "foreign"); err != nil {
						return "", err
					}
				}
				for i := 1; i <= 3; i++ {
					if err := notify(token, float64(i), 3, fmt.Sprintf("step %d é", i)); err != nil {
						return "", err
					}
				}
				if err := log.await(ctx, 3); err != nil {
					return "", err
				}
				return fmt.Sprint(token), nil
			})
			s := connect(t, New(tc.dial(t, srv), nil), ports.Signals{})
			res, err := s.Call(context.Background(), ports.CallRequest{Name: "progress", OnProgress: log.on})
			require.NoError(t, err)
			token := resultText(t, res)
			assert.True(t, strings.HasPrefix(token, progressTokenPrefix), "token %q", token)
			assert.Equal(t, []ports.Progress{
				{Progress: 1, Total: 3, Message: "step 1 é"},
				{Progress: 2, Total: 3, Message: "step 2 é"},
				{Progress: 3, Total: 3, Message: "step 3 é"},
			}, log.seen(), "only the call's own token, in order, unchanged")
		})
	}
}

func TestCallProgressTokens(t *testing.T) {
	srv := progressServer(func(_ context.Context, token any, _ notifier) (string, error) {
		return fmt.Sprint(token), nil
	})
	s := connect(t, New(memDialer(t, srv), nil), ports.Signals{})
	call := func(on func(ports.Progress)) string {
		res, err := s.Call(context.Background(), ports.CallRequest{Name: "progress", OnProgress: on})
		require.NoError(t, err)
		return resultText(t, res)
	}
	assert.Equal(t, "<nil>", call(nil), "no OnProgress, no token")
	a, b := call(func(ports.Progress) {}), call(func(ports.Progress) {})
	assert.NotEqual(t, a, b, "a token is unique within the session")
	assert.True(t, strings.HasPrefix(a, progressTokenPrefix))
}

func TestCallProgressMessageBounded(t *testing.T) {
	long := strings.Repeat("x", ports.MaxProgressMessage-1) + "é" + strings.Repeat("y", 10000)
	log := newProgressLog()
	srv := progressServer(func(ctx context.Context, token any, notify notifier) (string, error) {
		if err := notify(token, 1, 0, long); err != nil {
			return "", err
		}
		return "", log.await(ctx, 1)
	})
	s := connect(t, New(memDialer(t, srv), nil), ports.Signals{})
	_, err := s.Call(context.Background(), ports.CallRequest{Name: "progress", OnProgress: log.on})
	require.NoError(t, err)
	got := log.seen()
	require.Len(t, got, 1)
	assert.Equal(t, strings.Repeat("x", ports.MaxProgressMessage-1), got[0].Message, "cut before the character that crosses the bound")
}

func TestBoundMessage(t *testing.T) {
	max := ports.MaxProgressMessage
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"short", "héllo", "héllo"},
		{"exactly the bound", strings.Repeat("a", max), strings.Repeat("a", max)},
		{"one over", strings.Repeat("a", max+1), strings.Repeat("a", max)},
		{"a 2-byte character across", strings.Repeat("a", max-1) + "é", strings.Repeat("a", max-1)},
		{"a 4-byte character across", strings.Repeat("a", max-2) + "𝄞z", strings.Repeat("a", max-2)},
		{"a character ending at the bound", strings.Repeat("a", max-2) + "éz", strings.Repeat("a", max-2) + "é"},
		{"invalid bytes only", strings.Repeat("\x80", max+5), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := boundMessage(tt.in)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, len(got), max)
			if utf8.ValidString(tt.in) {
				assert.True(t, utf8.ValidString(got))
			}
		})
	}
}

func TestProgressRoutes(t *testing.T) {
	var p progressRoutes
	var n atomic.Int32
	token, remove := p.add(func(ports.Progress) { n.Add(1) })
	p.deliver(nil)
	p.deliver(&mcp.ProgressNotificationParams{ProgressToken: token})
	p.deliver(&mcp.ProgressNotificationParams{ProgressToken: token + "0"})
	p.deliver(&mcp.ProgressNotificationParams{ProgressToken: 1.0})
	p.deliver(&mcp.ProgressNotificationParams{})
	assert.Equal(t, int32(1), n.Load())
	remove()
	p.deliver(&mcp.ProgressNotificationParams{ProgressToken: token})
	assert.Equal(t, int32(1), n.Load(), "never after remove")
	assert.Empty(t, p.m)

	// remove waits for a delivery under way.
	entered, release := make(chan struct{}), make(chan struct{})
	token, remove = p.add(func(ports.Progress) {
		close(entered)
		<-release
	})
	go p.deliver(&mcp.ProgressNotificationParams{ProgressToken: token})
	<-entered
	removed := make(chan struct{})
	go func() {
		remove()
		close(removed)
	}()
	select {
	case <-removed:
		t.Fatal("remove returned while OnProgress was running")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-removed
}

// A flood of progress notifications is handed over one by one and never
// queued by the session: the call completes, and nothing it received is
// kept. (20k, not more: the SDK's decoding costs some 0.4 ms a
// notification under -race; the supervisor's test of the coalescing
// hand-off pushes 100k through a fake session.)
func TestCallProgressFlood(t *testing.T) {
	const flood = 20_000
	srv := progressServer(func(_ context.Context, token any, notify notifier) (string, error) {
		for i := 1; i <= flood; i++ {
			if err := notify(token, float64(i), flood, "flood"); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
	s := connect(t, New(memDialer(t, srv), nil), ports.Signals{})
	var n atomic.Int64
	var last atomic.Int64
	before := heapInUse()
	res, err := s.Call(context.Background(), ports.CallRequest{Name: "progress", OnProgress: func(p ports.Progress) {
		n.Add(1)
		last.Store(int64(p.Progress))
	}})
	require.NoError(t, err)
	assert.Equal(t, "done", resultText(t, res))
	got := n.Load()
	assert.Positive(t, got)
	assert.LessOrEqual(t, got, int64(flood))
	assert.LessOrEqual(t, last.Load(), int64(flood))
	after := heapInUse()
	assert.Less(t, after, before+16<<20, "the flood left %d bytes behind", after-before)
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// superviseSDK connects srv in memory under a supervisor with opts, as a
// Streamable HTTP server would be (an abandoned call keeps the session).
func superviseSDK(t *testing.T, srv *mcp.Server, opts *supervisor.Options) *supervisor.Server {
	t.Helper()
	mem := memDialer(t, srv)
	d := DialerFunc(func(ctx context.Context, tg ports.Target) (*Conn, error) {
		c, err := mem.Dial(ctx, tg)
		if err == nil {
			c.Abort = func() {}
		}
		return c, err
	})
	sv := supervisor.New(New(d, nil), ports.Target{ServerID: "srv", Kind: ports.TransportHTTP}, opts)
	t.Cleanup(func() { _ = sv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, sv.Connect(ctx))
	return sv
}

// workServer's tool "progress" works until its ctx ends or total has
// passed (0: never), reporting progress every interval until quiet has
// passed (0: always), when the call carries a progress token.
func workServer(interval, quiet, total time.Duration) *mcp.Server {
	return progressServer(func(ctx context.Context, token any, notify notifier) (string, error) {
		start := time.Now()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-tick.C:
			}
			if total > 0 && time.Since(start) >= total {
				return "done", nil
			}
			if token != nil && (quiet == 0 || time.Since(start) < quiet) {
				if err := notify(token, float64(n), 0, "working"); err != nil {
					return "", err
				}
			}
		}
	})
}

// The supervisor's call timeouts over a real session: progress from the
// server extends a call, silence ends it, CallTimeoutMax caps it, and the
// host's own callback (from the ctx of a catalog tool's call) sees the
// progress.
func TestSupervisedCallTimeouts(t *testing.T) {
	tests := []struct {
		name     string
		srv      *mcp.Server
		opts     supervisor.Options
		wantErr  bool
		atLeast  time.Duration
		atMost   time.Duration
		progress bool
		noAsk    bool // the host asks for no progress
	}{
		{
			name:     "progress keeps it alive past CallTimeout",
			srv:      workServer(20*time.Millisecond, 0, 1200*time.Millisecond),
			opts:     supervisor.Options{CallTimeout: 400 * time.Millisecond},
			atLeast:  1200 * time.Millisecond,
			progress: true,
		},
		{
			name:    "without the host's progress request CallTimeout bounds it in all",
			srv:     workServer(20*time.Millisecond, 0, 1200*time.Millisecond),
			opts:    supervisor.Options{CallTimeout: 400 * time.Millisecond},
			noAsk:   true,
			wantErr: true, atLeast: 400 * time.Millisecond,
		},
		{
			name:    "silence times it out",
			srv:     workServer(20*time.Millisecond, 200*time.Millisecond, 0),
			opts:    supervisor.Options{CallTimeout: 300 * time.Millisecond},
			wantErr: true, atLeast: 400 * time.Millisecond,
			progress: true,
		},
		{
			name:    "CallTimeoutMax caps it",
			srv:     workServer(20*time.Millisecond, 0, 0),
			opts:    supervisor.Options{CallTimeout: time.Minute, CallTimeoutMax: 400 * time.Millisecond},
			wantErr: true, atLeast: 400 * time.Millisecond, atMost: time.Minute,
			progress: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sv := superviseSDK(t, tt.srv, &tt.opts)
			tool, ok := sv.Catalog().Tool(catalog.ToolName("srv", "progress"))
			require.True(t, ok)
			var n atomic.Int32
			ctx := ports.WithProgress(context.Background(), func(ports.Progress) { n.Add(1) })
			if tt.noAsk {
				ctx = context.Background()
			}
			start := time.Now()
			res, err := tool.Call(ctx, nil)
			took := time.Since(start)
			assert.GreaterOrEqual(t, took, tt.atLeast)
			if tt.atMost > 0 {
				assert.Less(t, took, tt.atMost)
			}
			assert.Equal(t, tt.progress, n.Load() > 0)
			if !tt.wantErr {
				require.NoError(t, err)
				assert.JSONEq(t, `[{"type":"text","text":"done"}]`, string(res.Content))
				return
			}
			re := requireRefusal(t, err, refusal.Transient, supervisor.ReasonCallTimeout)
			assert.Equal(t, "srv", re.Server)
			// The session stays (HTTP-like) and serves the next call.
			assert.Equal(t, supervisor.Ready, sv.Status().State)
		})
	}
}

// What a go-sdk server receives of a supervised call with the default
// call timeouts: a progress token in _meta only when the host asked for
// progress (ports.WithProgress on the ctx of a catalog tool's call).
func TestSupervisedCallProgressToken(t *testing.T) {
	srv := progressServer(func(_ context.Context, token any, _ notifier) (string, error) {
		return fmt.Sprint(token), nil
	})
	sv := superviseSDK(t, srv, nil)
	tool, ok := sv.Catalog().Tool(catalog.ToolName("srv", "progress"))
	require.True(t, ok)
	call := func(ctx context.Context) string {
		res, err := tool.Call(ctx, nil)
		require.NoError(t, err)
		return resultText(t, ports.CallResult{Content: res.Content})
	}
	assert.Equal(t, "<nil>", call(context.Background()), "no progress asked for, no token")
	got := call(ports.WithProgress(context.Background(), func(ports.Progress) {}))
	assert.True(t, strings.HasPrefix(got, progressTokenPrefix), "token %q", got)
	assert.Equal(t, "<nil>", call(ports.WithProgress(context.Background(), nil)), "a nil callback asks for nothing")
}

// FuzzBoundMessage: the bound runs on the SDK's notification goroutine,
// where a panic cannot be recovered; whatever the server's message, the
// result is a prefix within the bound that splits no character.
func FuzzBoundMessage(f *testing.F) {
	f.Add("")
	f.Add("step é")
	f.Add(strings.Repeat("a", ports.MaxProgressMessage-1) + "é")
	f.Add(strings.Repeat("\x80", ports.MaxProgressMessage+3))
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) < ports.MaxProgressMessage && len(s) > 0 {
			s = strings.Repeat(s, ports.MaxProgressMessage/len(s)+1)
		}
		got := boundMessage(s)
		if len(got) > ports.MaxProgressMessage || !strings.HasPrefix(s, got) {
			t.Fatalf("got %d bytes, not a prefix within the bound", len(got))
		}
		if len(s) <= ports.MaxProgressMessage && got != s {
			t.Fatal("a message within the bound was cut")
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatal("a character was split")
		}
		if len(s) > ports.MaxProgressMessage && utf8.ValidString(s) && len(got) <= ports.MaxProgressMessage-utf8.UTFMax {
			t.Fatalf("cut to %d bytes: more than the one character across the bound", len(got))
		}
	})
}
