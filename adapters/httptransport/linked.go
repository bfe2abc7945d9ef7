package httptransport

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// drainGrace is how long an SSE answer's body may still be read after the
// context of its request ended, and drainLimit (in bytes) how much of it:
// the go-sdk client reads a stream to its end after the answer it waited
// for, while the call that sent it has already returned and ended its
// context. Cutting that read at once would drop the connection instead of
// pooling it, a new TCP connection per call.
const drainGrace = 50 * time.Millisecond

// linkedBody is a response body read under a context of its own, which
// ends when the request's context does (at once, or drainGrace later once
// graced) and when the body is closed. Read and Close may be called
// concurrently.
type linkedBody struct {
	io.ReadCloser
	parent context.Context    // the request's context
	own    context.Context    // the request's own context
	cancel context.CancelFunc // ends the request's own context
	stop   func() bool        // unregisters watch from the request's context
	// also, when set, ends the request's own context too (at once, no
	// grace): the connection of a request conn sends (sendOwned); stopAlso
	// unregisters that.
	also     context.Context
	stopAlso func() bool
	// authKeys are the header names the authenticator set on the request
	// itself (sendOwned's first attempt), which a retry must not carry.
	authKeys []string

	graced  atomic.Bool  // see grace
	drained atomic.Int64 // bytes read since parent ended, when graced

	mu     sync.Mutex // guards closed and timer
	closed bool
	timer  *time.Timer
}

// linkContext returns the context to send a request of ctx under, and the
// linkedBody to wrap its response's body in (attach), or to release when
// no response comes. also, when not nil, ends that context as well, at
// once: one context per request serves both the request's caller and its
// connection.
func linkContext(ctx, also context.Context) (context.Context, *linkedBody) {
	own, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := &linkedBody{parent: ctx, own: own, cancel: cancel, also: also}
	b.stop = context.AfterFunc(ctx, b.watch)
	if also != nil {
		b.stopAlso = context.AfterFunc(also, cancel)
	}
	return own, b
}

// ended returns the error of the request's caller's context, else that of
// also, else nil: why a request that failed was cut short, if it was.
func (b *linkedBody) ended() error {
	if err := b.parent.Err(); err != nil {
		return err
	}
	if b.also != nil {
		return b.also.Err()
	}
	return nil
}

// unlink unregisters the watches on the request's context and on also.
func (b *linkedBody) unlink() {
	b.stop()
	if b.stopAlso != nil {
		b.stopAlso()
	}
}

// attach makes b the body of resp.
func (b *linkedBody) attach(resp *http.Response) {
	b.ReadCloser = resp.Body
	resp.Body = b
}

// release ends the request's own context (no response to wrap).
func (b *linkedBody) release() {
	b.unlink()
	b.cancel()
}

// grace lets the body be read for drainGrace (and at most drainLimit bytes)
// after the request's context ends, instead of ending at once.
func (b *linkedBody) grace() {
	b.graced.Store(true)
}

// watch runs when the request's context ends.
func (b *linkedBody) watch() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	if !b.graced.Load() {
		b.cancel()
		return
	}
	b.timer = time.AfterFunc(drainGrace, b.cancel)
}

// Read implements io.Reader.
func (b *linkedBody) Read(p []byte) (int, error) {
	if err := b.own.Err(); err != nil {
		return 0, err // what the transport still holds is not handed out
	}
	n, err := b.ReadCloser.Read(p)
	// watch runs in a goroutine of its own, maybe late: the bytes are
	// counted from the moment parent ends.
	if n > 0 && b.graced.Load() && b.parent.Err() != nil && b.drained.Add(int64(n)) > drainLimit {
		b.cancel()
	}
	return n, err
}

// Close closes the body and ends the request's own context.
func (b *linkedBody) Close() error {
	err := b.ReadCloser.Close()
	b.unlink()
	b.mu.Lock()
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
	}
	b.mu.Unlock()
	b.cancel()
	return err
}
