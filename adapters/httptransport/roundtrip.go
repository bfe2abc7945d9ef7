package httptransport

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// drainLimit bounds how much of a refused response is read so its
// connection can be reused.
const drainLimit = 64 << 10

// roundTripper is the admitted http.RoundTripper of one server.
type roundTripper struct {
	server  string
	origin  string
	scheme  string
	static  http.Header // validated; never modified after construction
	auth    ports.Authenticator
	cap     int64
	trace   bool // origin is in the trace allow-list
	base    *http.Transport
	authReq ports.AuthRequest
}

// CloseIdleConnections closes the pooled connections of this server.
func (rt *roundTripper) CloseIdleConnections() { rt.base.CloseIdleConnections() }

// RoundTrip implements http.RoundTripper. It never modifies req.
func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	closeBody := func() {
		if req.Body != nil {
			req.Body.Close()
		}
	}
	if req.URL == nil || req.URL.User != nil || originOf(req.URL) != rt.origin {
		closeBody()
		return nil, rt.refuse(refusal.Refused, ReasonOriginMismatch)
	}
	ctx := req.Context()
	tp := rt.traceparent(req)

	resp, err := rt.send(req, tp, false)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		challenge := resp.Header.Get("WWW-Authenticate")
		status := resp.StatusCode
		discard(resp)
		if rt.auth == nil {
			closeBody()
			return nil, rt.refuse(refusal.AuthRequired, ReasonAuthRequired)
		}
		retry, rerr := rt.auth.Refused(ctx, ports.AuthRefusal{
			ServerID: rt.server, Origin: rt.origin, Status: status, Challenge: challenge,
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
		resp, err = rt.send(req, tp, true)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			discard(resp)
			return nil, rt.refuse(refusal.AuthRefused, ReasonAuthRefused)
		}
	}
	return rt.check(req, resp)
}

// send sends one attempt: a clone of req with the static headers, the
// authenticator's headers and tp set. A resend takes a fresh body from
// req.GetBody. The request is not sent when the authenticator fails.
func (rt *roundTripper) send(req *http.Request, tp string, resend bool) (*http.Response, error) {
	ctx := req.Context()
	out := req.Clone(ctx) // deep-copies the header map
	if resend && req.Body != nil && req.Body != http.NoBody {
		b, err := req.GetBody()
		if err != nil {
			return nil, rt.refuse(refusal.AuthRefused, ReasonBodyUnavailable)
		}
		out.Body = b
	}
	fail := func(err error) (*http.Response, error) {
		if out.Body != nil {
			out.Body.Close()
		}
		return nil, err
	}
	for k, v := range rt.static {
		out.Header[k] = append([]string(nil), v...)
	}
	if rt.auth != nil {
		r := rt.authReq
		r.Method = req.Method
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
			out.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
		}
	}
	out.Header.Del("Traceparent")
	out.Header.Del("Tracestate")
	if tp != "" {
		out.Header.Set("Traceparent", tp)
	}
	resp, err := rt.base.RoundTrip(out)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, rt.netError(err)
	}
	return resp, nil
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
	default:
		discard(resp)
		return nil, newStatusError(code, rt.server, rt.origin)
	}
	if isSSE(resp) {
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
	buf, err := io.ReadAll(io.LimitReader(resp.Body, rt.cap+1))
	if int64(len(buf)) > rt.cap {
		discardNoDrain(resp)
		return nil, rt.capError()
	}
	resp.Body.Close()
	if err != nil {
		if ctx := resp.Request.Context(); ctx != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, rt.netError(err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(buf))
	resp.ContentLength = int64(len(buf))
	return resp, nil
}

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

// netError maps a transport failure to a fixed-text refusal: the egress or
// TLS refusal it carries, else Class Transient ReasonNetwork.
func (rt *roundTripper) netError(err error) *refusal.Error {
	if m := mapNetError(err, rt.server, rt.origin); m != nil {
		return m
	}
	return rt.refuse(refusal.Transient, ReasonNetwork)
}

func isSSE(resp *http.Response) bool { return mediaType(resp) == "text/event-stream" }

func isJSON(resp *http.Response) bool { return mediaType(resp) == "application/json" }

func mediaType(resp *http.Response) string {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
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
