package mcpsession

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func requireDone(t testing.TB, s ports.Session, within time.Duration) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(within):
		t.Fatal("Done not closed")
	}
}

func requireNotDone(t testing.TB, s ports.Session) {
	t.Helper()
	select {
	case <-s.Done():
		t.Fatal("Done closed")
	default:
	}
}

// TestStdioChild runs the whole session against a real child process.
func TestStdioChild(t *testing.T) {
	var aborts atomic.Int32
	s := connect(t, New(fixedDialer(fixtureConn(t, &aborts)), nil), ports.Signals{})
	id := s.Identity()
	assert.Equal(t, "fixture", id.ServerName)
	assert.Equal(t, ModernProtocolVersion, id.ProtocolVersion, "the SDK stdio server speaks the modern era")
	assert.Equal(t, []ports.ListKind{ports.ListTools}, id.Declared)

	p, err := s.List(context.Background(), ports.ListTools, "")
	require.NoError(t, err)
	var names []string
	for _, tool := range p.Tools {
		names = append(names, tool.Name)
	}
	assert.ElementsMatch(t, []string{"echo", "hang", "stuck"}, names)

	res, err := s.Call(context.Background(), ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"message":"over stdio"}`)})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"text","text":"over stdio"}]`, string(res.Content))

	start := time.Now()
	require.NoError(t, s.Close())
	assert.Less(t, time.Since(start), 2*time.Second, "a well-behaved child exits on stdin EOF")
	requireDone(t, s, time.Second)
	assert.Zero(t, aborts.Load(), "a clean close needs no abort")
}

// watchSends makes c's connection call sent with every message it has
// written: a test's signal that a request is in flight (a ctx ending
// before the send is a refusal of its own, "canceled" or
// "deadline_exceeded", and aborts nothing), instead of a sleep.
func watchSends(c *Conn, sent func(jsonrpc.Message)) *Conn {
	c.Transport = sendWatch{Transport: c.Transport, sent: sent}
	return c
}

type sendWatch struct {
	mcp.Transport
	sent func(jsonrpc.Message)
}

func (w sendWatch) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return sendWatchConn{Connection: c, sent: w.sent}, nil
}

type sendWatchConn struct {
	mcp.Connection
	sent func(jsonrpc.Message)
}

func (c sendWatchConn) Write(ctx context.Context, m jsonrpc.Message) error {
	err := c.Connection.Write(ctx, m)
	if err == nil {
		c.sent(m)
	}
	return err
}

// onRequest is a sent hook calling f for each request of method.
func onRequest(method string, f func()) func(jsonrpc.Message) {
	return func(m jsonrpc.Message) {
		if r, ok := m.(*jsonrpc.Request); ok && r.Method == method {
			f()
		}
	}
}

// expiringCtx is a context whose deadline passes when expire is called
// (its Err is then context.DeadlineExceeded): a deadline that passes once
// the request is in flight, however long sending it took.
type expiringCtx struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newExpiringCtx() *expiringCtx {
	return &expiringCtx{Context: context.Background(), done: make(chan struct{})}
}

func (c *expiringCtx) expire()               { c.once.Do(func() { close(c.done) }) }
func (c *expiringCtx) Done() <-chan struct{} { return c.done }

func (c *expiringCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestCallAbandoned: a call whose ctx ends in flight aborts the connection
// exactly once, however many calls are abandoned.
func TestCallAbandoned(t *testing.T) {
	t.Run("stdio child is killed once", func(t *testing.T) {
		var aborts atomic.Int32
		const n = 4
		sent := make(chan struct{}, n)
		conn := watchSends(fixtureConn(t, &aborts), onRequest("tools/call", func() { sent <- struct{}{} }))
		s := connect(t, New(fixedDialer(conn), nil), ports.Signals{})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.Call(ctx, ports.CallRequest{Name: "stuck"})
			}()
		}
		for range n { // every call is written to the child
			select {
			case <-sent:
			case <-time.After(30 * time.Second):
				t.Fatal("the calls were not sent")
			}
		}
		cancel()
		wg.Wait()
		for _, err := range errs {
			re := requireRefusal(t, err, refusal.Transient, "call_abandoned")
			assert.Equal(t, "context canceled", re.Detail)
		}
		assert.Equal(t, int32(1), aborts.Load())
		requireDone(t, s, 5*time.Second) // the killed child ends the session

		_, err := s.Call(context.Background(), ports.CallRequest{Name: "echo"})
		require.Error(t, err, "the session is gone")
		assertNoCanary(t, err)
		start := time.Now()
		require.NoError(t, s.Close())
		assert.Less(t, time.Since(start), 2*time.Second)
		assert.Equal(t, int32(1), aborts.Load(), "Close does not abort again")
	})

	t.Run("deadline", func(t *testing.T) {
		var aborts atomic.Int32
		ctx := newExpiringCtx()
		conn := watchSends(fixtureConn(t, &aborts), onRequest("tools/call", ctx.expire))
		s := connect(t, New(fixedDialer(conn), nil), ports.Signals{})
		_, err := s.Call(ctx, ports.CallRequest{Name: "hang"})
		re := requireRefusal(t, err, refusal.Transient, "call_abandoned")
		assert.Equal(t, "context deadline exceeded", re.Detail)
		assert.Equal(t, int32(1), aborts.Load())
		requireDone(t, s, 5*time.Second)
	})

	t.Run("list is abandoned the same way", func(t *testing.T) {
		srv := newSDKServer(nil)
		block := make(chan struct{})
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "prompts/list" {
					select {
					case <-block:
					case <-ctx.Done():
					}
				}
				return next(ctx, method, req)
			}
		})
		defer close(block)
		var aborts atomic.Int32
		ctx := newExpiringCtx()
		d := DialerFunc(func(dctx context.Context, tg ports.Target) (*Conn, error) {
			c, err := memDialer(t, srv).Dial(dctx, tg)
			if err != nil {
				return nil, err
			}
			c.Abort = func() { aborts.Add(1) }
			return watchSends(c, onRequest("prompts/list", ctx.expire)), nil
		})
		s := connect(t, New(d, nil), ports.Signals{})
		_, err := s.List(ctx, ports.ListPrompts, "")
		requireRefusal(t, err, refusal.Transient, "list_abandoned")
		assert.Equal(t, int32(1), aborts.Load())
	})

	for _, tc := range transports {
		t.Run("no abort hook closes the session/"+tc.name, func(t *testing.T) {
			s := connect(t, New(tc.dial(t, newSDKServer(nil)), nil), ports.Signals{})
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err := s.Call(ctx, ports.CallRequest{Name: "hang"})
			requireRefusal(t, err, refusal.Transient, "call_abandoned")
			requireDone(t, s, 10*time.Second)
			_, err = s.Call(context.Background(), ports.CallRequest{Name: "echo"})
			requireRefusal(t, err, refusal.Transient, "session_closed")
			_, err = s.List(context.Background(), ports.ListTools, "")
			requireRefusal(t, err, refusal.Transient, "session_closed")
			require.NoError(t, s.Close())
		})
	}
}

// TestCloseEndsInFlight: Close retires in-flight calls at once rather than
// waiting for them (the SDK's Close alone would block). The CloseTimeout
// is long (30 s), so that a Close that waited would take it, and the bound
// (10 s) tells the two apart on a machine loaded far past its cores (a
// 2 s bound was once missed by 40 ms at load 14).
func TestCloseEndsInFlight(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			var released atomic.Int32
			inner := tc.dial(t, newSDKServer(nil))
			d := DialerFunc(func(ctx context.Context, tg ports.Target) (*Conn, error) {
				c, err := inner.Dial(ctx, tg)
				if err == nil {
					rel := c.Release
					c.Release = func() {
						released.Add(1)
						if rel != nil {
							rel()
						}
					}
				}
				return c, err
			})
			s := connect(t, New(d, &Options{CloseTimeout: 30 * time.Second}), ports.Signals{})
			errc := make(chan error, 3)
			for range 3 {
				go func() {
					_, err := s.Call(context.Background(), ports.CallRequest{Name: "hang"})
					errc <- err
				}()
			}
			time.Sleep(100 * time.Millisecond)
			requireNotDone(t, s)
			start := time.Now()
			require.NoError(t, s.Close())
			assert.Less(t, time.Since(start), 10*time.Second)
			for range 3 {
				select {
				case err := <-errc:
					requireRefusal(t, err, refusal.Transient, "session_closed")
				case <-time.After(5 * time.Second):
					t.Fatal("an in-flight call outlived Close")
				}
			}
			requireDone(t, s, time.Second)
			assert.Equal(t, int32(1), released.Load())
			require.NoError(t, s.Close(), "Close is idempotent")
			assert.Equal(t, int32(1), released.Load())
		})
	}
}

// TestCloseAbortsStubbornChild: a child that ignores stdin EOF and SIGTERM
// would hold the SDK's Close for 10 s and more; past CloseTimeout the
// Abort hook kills it.
func TestCloseAbortsStubbornChild(t *testing.T) {
	var aborts atomic.Int32
	s := connect(t, New(fixedDialer(fixtureConn(t, &aborts, "-stubborn")), &Options{CloseTimeout: 300 * time.Millisecond}), ports.Signals{})
	start := time.Now()
	require.NoError(t, s.Close())
	elapsed := time.Since(start)
	assert.GreaterOrEqual(t, elapsed, 300*time.Millisecond)
	assert.Less(t, elapsed, 3*time.Second)
	assert.Equal(t, int32(1), aborts.Load())
	requireDone(t, s, time.Second)
}

// TestCloseTimeout: when even Abort does not end the close, Close gives up
// with a refusal after twice the timeout.
func TestCloseTimeout(t *testing.T) {
	var aborts atomic.Int32
	conn := fixtureConn(t, &aborts, "-stubborn")
	kill := conn.Abort
	conn.Abort = func() { aborts.Add(1) } // an Abort that does nothing
	s, err := New(fixedDialer(conn), &Options{CloseTimeout: 100 * time.Millisecond}).Connect(context.Background(), target("srv"), ports.Signals{})
	require.NoError(t, err)
	err = s.Close()
	requireRefusal(t, err, refusal.Transient, "close_timeout")
	assert.Equal(t, int32(1), aborts.Load())
	assert.Equal(t, err, s.Close(), "later calls return the same result")
	kill() // now end the child so nothing is left behind
	requireDone(t, s, 5*time.Second)
	// The SDK's close finishes once the child is gone.
	time.Sleep(100 * time.Millisecond)
}

// TestDoneWhenPeerGoes: Done closes when the server side ends.
func TestDoneWhenPeerGoes(t *testing.T) {
	t.Run("stdio child killed", func(t *testing.T) {
		var aborts atomic.Int32
		conn := fixtureConn(t, &aborts)
		s := connect(t, New(fixedDialer(conn), nil), ports.Signals{})
		requireNotDone(t, s)
		conn.Transport.(*killableCommand).kill()
		requireDone(t, s, 5*time.Second)
		_, err := s.Call(context.Background(), ports.CallRequest{Name: "echo"})
		requireRefusal(t, err, refusal.Transient, "connection_closed")
	})
	t.Run("memory server session closed", func(t *testing.T) {
		// The server's end of the pipe is closed under its session, not
		// by ServerSession.Close: that waits for every request in flight,
		// and go-sdk v1.8.0's subscriptions/listen handler (which a
		// 2026-07-28 session keeps open) returns only when its context
		// ends, so Close would wait for ever whenever the listen request
		// came in first.
		var st *recordingTransport
		srv := newSDKServer(nil)
		d := DialerFunc(func(ctx context.Context, _ ports.Target) (*Conn, error) {
			ct, in := mcp.NewInMemoryTransports()
			st = &recordingTransport{Transport: in}
			_, err := srv.Connect(ctx, st, nil)
			return &Conn{Transport: ct}, err
		})
		s := connect(t, New(d, nil), ports.Signals{})
		requireNotDone(t, s)
		require.NoError(t, st.conn.Close())
		requireDone(t, s, 5*time.Second)
		_, err := s.List(context.Background(), ports.ListTools, "")
		requireRefusal(t, err, refusal.Transient, "connection_closed")
	})
}

// recordingTransport keeps the Connection its Transport made, so a test
// can close it under the session that reads it.
type recordingTransport struct {
	mcp.Transport
	conn mcp.Connection
}

func (r *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	r.conn = c
	return c, err
}
