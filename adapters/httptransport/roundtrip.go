package httptransport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// drainLimit bounds how much of a refused response is read so its
// connection can be reused.
const drainLimit = 64 << 10

// presizeLimit bounds the first buffer capBody allocates from an announced
// Content-Length, so a false announcement cannot make it allocate more
// than this before any byte arrives.
const presizeLimit = 64 << 10

// roundTripper is the admitted http.RoundTripper of one server.
type roundTripper struct {
	server string
	origin string
	scheme string
	// urlScheme and urlHost are the admitted URL's Scheme and Host as
	// parsed: a request URL with exactly these has origin origin, since
	// originOf depends on nothing else (a fast path; any other form is
	// compared through originOf).
	urlScheme string
	urlHost   string
	static    http.Header // validated; never modified after construction
	auth      ports.Authenticator
	cap       int64
	trace     bool            // origin is in the trace allow-list
	base      *http.Transport // shared per origin (pool.go)
	pool      *pool
	released  atomic.Bool // CloseIdleConnections let go of base
	authReq   ports.AuthRequest
	filter    atomic.Pointer[func(method string, call bool) bool] // SetInboundFilter
	// onChallenge and endpoint: Options.OnChallenge and the target's URL.
	onChallenge func(Challenge)
	endpoint    string
	// htuPath and htu: the escaped path of the target's URL and
	// ports.AuthRequest.URL of a request to it (scheme://host/path, lower
	// case scheme and host, no query), built once.
	htuPath string
	htu     string
}

// htuOf returns ports.AuthRequest.URL of a request to u: the precomputed
// one when u is the target's URL, else built (scheme and host lower case,
// the escaped path, no query or fragment).
func (rt *roundTripper) htuOf(u *url.URL) string {
	if u.Scheme == rt.urlScheme && u.Host == rt.urlHost && u.EscapedPath() == rt.htuPath {
		return rt.htu
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + u.EscapedPath()
}

// CloseIdleConnections ends this server's hold on its origin's shared
// transport: the first call lets go of it (the last holder closes its idle
// connections); a later call closes its idle connections when no
// transport holds it any more (a request sent after the first call left
// one idle). Safe for concurrent use.
func (rt *roundTripper) CloseIdleConnections() {
	if rt.pool == nil {
		rt.base.CloseIdleConnections()
		return
	}
	if rt.released.CompareAndSwap(false, true) {
		rt.pool.release(rt.origin, rt.base)
		return
	}
	if !rt.pool.held(rt.origin, rt.base) {
		rt.base.CloseIdleConnections()
	}
}

// RoundTrip implements http.RoundTripper. It never modifies req.
func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	return rt.roundTrip(req, req.Context(), nil)
}

// sendOwned is RoundTrip for a request conn made for this one exchange
// (newRequest): req runs under link's context already, so its first
// attempt is req itself, its header written in place instead of copied.
// ctx is the context of the request's caller.
func (rt *roundTripper) sendOwned(ctx context.Context, req *http.Request, link *linkedBody) (*http.Response, error) {
	return rt.roundTrip(req, ctx, link)
}

// roundTrip is RoundTrip, and sendOwned when owned is set.
func (rt *roundTripper) roundTrip(req *http.Request, ctx context.Context, owned *linkedBody) (*http.Response, error) {
	closeBody := func() {
		if req.Body != nil {
			req.Body.Close()
		}
	}
	if req.URL == nil || req.URL.User != nil || !rt.sameOrigin(req.URL) {
		if owned != nil {
			owned.release()
		}
		closeBody()
		return nil, rt.refuse(refusal.Refused, ReasonOriginMismatch)
	}
	tp := rt.traceparent(req)

	resp, err := rt.send(ctx, req, tp, false, owned)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		challenge := resp.Header.Get("WWW-Authenticate")
		nonce := resp.Header.Get("DPoP-Nonce")
		status := resp.StatusCode
		discard(resp)
		rt.tell(status, challenge)
		if rt.auth == nil {
			closeBody()
			return nil, rt.refuse(refusal.AuthRequired, ReasonAuthRequired)
		}
		retry, rerr := rt.auth.Refused(ctx, ports.AuthRefusal{
			ServerID: rt.server, Origin: rt.origin, Status: status, Challenge: challenge, DPoPNonce: nonce,
		})
		if rerr != nil || !retry {
			closeBody()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, rt.refuse(refusal.AuthRefused, ReasonAuthRefused)
		}
		if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
			closeBody()
			return nil, rt.refuse(refusal.AuthRefused, ReasonBodyUnavailable)
		}
		if owned != nil {
			// The first attempt wrote its credential into req itself: the
			// retry starts from req without it (the static headers are
			// set again by send), so it carries only its own.
			for _, k := range owned.authKeys {
				req.Header.Del(k)
			}
		}
		resp, err = rt.send(ctx, req, tp, true, nil)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			rt.tell(resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			discard(resp)
			return nil, rt.refuse(refusal.AuthRefused, ReasonAuthRefused)
		}
	}
	return rt.check(req, resp)
}

// tell hands a 401 or 403 answer's challenge to Options.OnChallenge.
func (rt *roundTripper) tell(status int, challenge string) {
	if rt.onChallenge == nil || challenge == "" {
		return
	}
	rt.onChallenge(Challenge{ServerID: rt.server, URL: rt.endpoint, Origin: rt.origin, Status: status, WWWAuthenticate: challenge})
}

// sameOrigin reports whether u has the admitted origin.
func (rt *roundTripper) sameOrigin(u *url.URL) bool {
	if u.Scheme == rt.urlScheme && u.Host == rt.urlHost {
		return true
	}
	return originOf(u) == rt.origin
}

// send sends one attempt of req, whose caller's context is ctx: a clone
// of req with the static headers, the authenticator's headers and tp set
// (a shallow copy, sharing req's header, when none of these changes it;
// see keepsHeader), or, when owned is set, req itself with them set in
// place (its first attempt, under owned's context). A resend takes a
// fresh body from req.GetBody. The request is not sent when the
// authenticator fails.
func (rt *roundTripper) send(ctx context.Context, req *http.Request, tp string, resend bool, owned *linkedBody) (*http.Response, error) {
	var out *http.Request
	link := owned
	shared := false
	if owned != nil {
		out = req
	} else {
		// The request runs under a context of its own that ends with ctx
		// (see linkedBody), so that check can grace an SSE answer's drain.
		var own context.Context
		own, link = linkContext(ctx, nil)
		if shared = rt.keepsHeader(req, tp); shared {
			out = req.WithContext(own) // the header map is shared, never written
		} else {
			out = req.Clone(own) // deep-copies the header map
		}
	}
	if resend && req.Body != nil && req.Body != http.NoBody {
		b, err := req.GetBody()
		if err != nil {
			link.release()
			return nil, rt.refuse(refusal.AuthRefused, ReasonBodyUnavailable)
		}
		out.Body = b
	}
	fail := func(err error) (*http.Response, error) {
		link.release()
		if out.Body != nil {
			out.Body.Close()
		}
		return nil, err
	}
	for k, v := range rt.static {
		if owned != nil {
			out.Header[k] = v // validated, never modified: nothing writes into a value
		} else {
			out.Header[k] = append([]string(nil), v...)
		}
	}
	if rt.auth != nil {
		r := rt.authReq
		r.Method = req.Method
		r.URL = rt.htuOf(req.URL)
		h, err := rt.auth.Headers(ctx, r)
		if err != nil {
			if ctx.Err() != nil {
				return fail(ctx.Err())
			}
			return fail(rt.authError(err))
		}
		for k, v := range h {
			if reason := checkHeader(k, v); reason != "" {
				return fail(rt.refuse(refusal.AuthRequired, reason))
			}
		}
		for k, v := range h {
			ck := http.CanonicalHeaderKey(k)
			out.Header[ck] = append([]string(nil), v...)
			if owned != nil {
				owned.authKeys = append(owned.authKeys, ck)
			}
		}
	}
	if !shared {
		out.Header.Del("Traceparent")
		out.Header.Del("Tracestate")
		if tp != "" {
			out.Header.Set("Traceparent", tp)
		}
	}
	resp, err := rt.base.RoundTrip(out)
	if err != nil {
		if cerr := link.ended(); cerr != nil {
			link.release()
			return nil, cerr
		}
		link.release()
		return nil, rt.netError(err)
	}
	link.attach(resp)
	return resp, nil
}

// keepsHeader reports whether the attempt for req sends req's header
// unchanged: no static header, no authenticator, no traceparent to set and
// none to strip. Then send shares the header map instead of copying it,
// which it may do since it writes nothing into it.
func (rt *roundTripper) keepsHeader(req *http.Request, tp string) bool {
	if len(rt.static) > 0 || rt.auth != nil || tp != "" {
		return false
	}
	_, tp1 := req.Header["Traceparent"]
	_, ts := req.Header["Tracestate"]
	return !tp1 && !ts
}

// check turns resp into what the SDK sees: a refusal for a redirect or a
// status the SDK would only report as text, the response otherwise, with a
// non-SSE body read in full under the receive cap.
func (rt *roundTripper) check(req *http.Request, resp *http.Response) (*http.Response, error) {
	code := resp.StatusCode
	switch {
	case code >= 300 && code < 400:
		discard(resp)
		return nil, rt.refuse(refusal.Refused, ReasonRedirectRefused)
	case code >= 200 && code < 300:
	case req.Method == http.MethodGet && code >= 400 && code < 500:
		// The SDK reads a 4xx on GET as "no standalone stream here".
	case code == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "":
		// The SDK maps this to ErrSessionMissing.
	case code >= 400 && code < 500 && isJSON(resp):
		// A JSON-RPC error body: the SDK surfaces it as a *jsonrpc.Error.
	case legacySSE(req.Method, code, req.URL.Path):
		discard(resp)
		return nil, legacySSEError(code, rt.server, rt.origin)
	default:
		discard(resp)
		return nil, newStatusError(code, rt.server, rt.origin)
	}
	if isSSE(resp) {
		if b, ok := resp.Body.(*linkedBody); ok && req.Method == http.MethodPost {
			b.grace() // the answer to a POST: the SDK drains it after the answer
		}
		return resp, nil
	}
	return rt.capBody(resp)
}

// capBody reads a non-SSE body in full, refusing one larger than the cap
// without reading more than cap+1 bytes of it.
func (rt *roundTripper) capBody(resp *http.Response) (*http.Response, error) {
	if resp.ContentLength > rt.cap {
		discardNoDrain(resp)
		return nil, rt.capError()
	}
	pooled := bodyPool.Get().(*[]byte)
	buf, err := readAtMostInto((*pooled)[:0], resp.Body, rt.cap+1, resp.ContentLength)
	if int64(len(buf)) > rt.cap {
		putBody(pooled, buf)
		discardNoDrain(resp)
		return nil, rt.capError()
	}
	resp.Body.Close()
	if err != nil {
		putBody(pooled, buf)
		if ctx := resp.Request.Context(); ctx != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, rt.netError(err)
	}
	bb := newBufferedBody(buf)
	bb.pooled = pooled
	resp.Body = bb
	resp.ContentLength = int64(len(buf))
	return resp, nil
}

// bodyPool holds the buffers capBody reads bodies into; conn gives a JSON
// answer's back once it has decoded it (bufferedBody.recycle: the decoder
// copies out what it keeps). A body nobody recycles is left to the
// collector. maxPooledBody bounds a buffer kept: as the SSE reader's
// (maxPooledSSE), large enough for a tools/list page of a large catalog,
// so that a listing's pages are read into a warm buffer.
var bodyPool = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledBody = maxPooledSSE

// putBody gives buf, read into *p, back to bodyPool.
func putBody(p *[]byte, buf []byte) {
	if cap(buf) > maxPooledBody {
		return
	}
	*p = buf[:0]
	bodyPool.Put(p)
}

// readAtMost reads r until EOF or an error, but never more than limit
// bytes, like io.ReadAll(io.LimitReader(r, limit)). hint, the announced
// length or -1, sizes the first buffer (at most presizeLimit bytes).
func readAtMost(r io.Reader, limit, hint int64) ([]byte, error) {
	return readAtMostInto(nil, r, limit, hint)
}

// readAtMostInto is readAtMost reading into buf[len(buf):cap(buf)] first
// (buf is empty; it is grown as readAtMost sizes its first buffer when
// smaller). A full buffer doubles (never beyond limit), so a body of n
// bytes costs about 2n bytes of buffers, not the 5n of append's growth
// for large slices.
func readAtMostInto(buf []byte, r io.Reader, limit, hint int64) ([]byte, error) {
	n := int64(512)
	if hint >= 0 && hint < limit {
		n = hint + 1 // room to see EOF without growing
	}
	n = min(n, limit, presizeLimit)
	if int64(cap(buf)) < n || cap(buf) == 0 {
		buf = make([]byte, 0, max(n, 1))
	}
	lr := io.LimitedReader{R: r, N: limit}
	for {
		m, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return buf, err
		}
		if len(buf) == cap(buf) {
			// lr.N > 0 here (else lr.Read returned io.EOF), so
			// len(buf) < limit and the buffer grows.
			nb := make([]byte, len(buf), min(2*int64(cap(buf)), limit))
			copy(nb, buf)
			buf = nb
		}
	}
}

// bufferedBody is a response body already read into memory; Close does
// nothing.
type bufferedBody struct {
	bytes.Reader
	b      []byte  // the whole body, for a reader that takes it at once (conn)
	pooled *[]byte // b's holder from bodyPool, or nil
}

// recycle gives b back to bodyPool; the body must not be used after.
func (b *bufferedBody) recycle() {
	if b.pooled == nil {
		return
	}
	p, buf := b.pooled, b.b
	b.pooled, b.b = nil, nil
	b.Reset(nil)
	putBody(p, buf)
}

func newBufferedBody(b []byte) *bufferedBody {
	bb := &bufferedBody{b: b}
	bb.Reset(b)
	return bb
}

// Close implements io.Closer.
func (*bufferedBody) Close() error { return nil }

func (rt *roundTripper) capError() *refusal.Error {
	e := rt.refuse(refusal.Protocol, ReasonReceiveCap)
	e.Detail = "receive cap of " + strconv.FormatInt(rt.cap, 10) + " bytes"
	return e
}

// traceparent returns the traceparent req gets, or "": only when this
// origin is allow-listed, req's context carries an intent and req's body is
// the intent's tools/call or its cancellation.
func (rt *roundTripper) traceparent(req *http.Request) string {
	if !rt.trace || req.Method != http.MethodPost || req.GetBody == nil {
		return ""
	}
	in, _ := req.Context().Value(traceKey{}).(*traceIntent)
	if in == nil {
		return ""
	}
	b, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer b.Close()
	body, err := io.ReadAll(io.LimitReader(b, maxTraceSniff+1))
	if err != nil {
		return ""
	}
	return in.traceFor(body)
}

// authError maps an Authenticator.Headers failure to a content-free
// refusal: a *refusal.Error keeps its Class (AuthRequired, AuthRefused or
// Transient; anything else becomes AuthRequired), Reason and Detail; any
// other error becomes ReasonAuthFailed, its text dropped.
func (rt *roundTripper) authError(err error) *refusal.Error {
	var r *refusal.Error
	if !errors.As(err, &r) {
		return rt.refuse(refusal.AuthRequired, ReasonAuthFailed)
	}
	c := *r
	switch c.Class {
	case refusal.AuthRequired, refusal.AuthRefused, refusal.Transient:
	default:
		c.Class = refusal.AuthRequired
	}
	c.Server, c.Origin = rt.server, rt.origin
	return &c
}

func (rt *roundTripper) refuse(class refusal.Class, reason string) *refusal.Error {
	return &refusal.Error{Class: class, Reason: reason, Server: rt.server, Origin: rt.origin}
}

// netError maps a transport failure to a fixed-text error: the egress
// refusal it carries, else a *NetError (Class Refused ReasonTLS, or Class
// Transient ReasonNetwork) with its cause.
func (rt *roundTripper) netError(err error) error {
	return newNetError(err, rt.server, rt.origin)
}

func isSSE(resp *http.Response) bool { return mediaType(resp) == "text/event-stream" }

func isJSON(resp *http.Response) bool { return mediaType(resp) == "application/json" }

func mediaType(resp *http.Response) string {
	ct := resp.Header.Get("Content-Type")
	switch ct {
	case "text/event-stream", "application/json":
		return ct // what mime.ParseMediaType returns for them, without its allocations
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}

// discard drains a little of resp's body, so the connection can be reused,
// and closes it.
func discard(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	resp.Body.Close()
}

// discardNoDrain closes resp's body without reading it (the connection is
// dropped).
func discardNoDrain(resp *http.Response) { resp.Body.Close() }
