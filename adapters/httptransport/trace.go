package httptransport

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpward/mcpward/core/refusal"
)

// maxTraceSniff bounds how much of a request body is parsed to decide on
// trace context. A tools/call body larger than this does not carry the
// traceparent (fail closed).
const maxTraceSniff = 1 << 20

// traceIntent is one tool call's trusted traceparent and, once seen, the
// JSON-RPC id of the tools/call request it belongs to.
type traceIntent struct {
	tp string

	mu sync.Mutex
	id []byte // canonical JSON of the bound id; nil until bound
}

type traceKey struct{}

// WithTraceparent returns a context carrying the intent to send tp on one
// tool call made with it. The transport sends tp only on the first tools/call
// request it sees under this context (binding that request's id) and on the
// notifications/cancelled for that id, and only to an origin listed in
// Options.TraceOrigins; every other request under the context (GETs, list
// refreshes, replies to the server) goes without it. Use a fresh context per
// call. tp must be a valid W3C traceparent (see ValidTraceparent), else the
// error is a *refusal.Error of Class Config, Reason ReasonTraceparentInvalid.
func WithTraceparent(ctx context.Context, tp string) (context.Context, error) {
	if !ValidTraceparent(tp) {
		return ctx, refusal.New(refusal.Config, ReasonTraceparentInvalid, "")
	}
	return context.WithValue(ctx, traceKey{}, &traceIntent{tp: tp}), nil
}

// ValidTraceparent reports whether tp is a W3C traceparent of version 00:
// "00-" 32 lowercase hex (not all zero) "-" 16 lowercase hex (not all zero)
// "-" 2 lowercase hex, and nothing else.
func ValidTraceparent(tp string) bool {
	if len(tp) != 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-' {
		return false
	}
	if tp[:2] != "00" {
		return false
	}
	return lowerHex(tp[3:35], true) && lowerHex(tp[36:52], true) && lowerHex(tp[53:55], false)
}

func lowerHex(s string, nonZero bool) bool {
	zero := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		default:
			return false
		}
		if c != '0' {
			zero = false
		}
	}
	return !nonZero || !zero
}

// jsonrpcProbe is the part of a JSON-RPC message the trace decision reads.
type jsonrpcProbe struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  *struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// traceFor decides whether body, a request about to be sent under intent,
// gets the intent's traceparent. It binds the intent to the first tools/call
// request id it sees. It returns "" when the body is not exactly one
// JSON-RPC message, is not the bound tools/call or its cancellation, or
// cannot be parsed.
func (in *traceIntent) traceFor(body []byte) string {
	id, method, ok := sniffCall(body)
	if !ok {
		return ""
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	switch method {
	case "tools/call":
		if in.id == nil {
			in.id = id
		}
		if bytes.Equal(in.id, id) {
			return in.tp
		}
	case "notifications/cancelled":
		if in.id != nil && bytes.Equal(in.id, id) {
			return in.tp
		}
	}
	return ""
}

// sniffCall parses body as one JSON-RPC 2.0 message and returns the
// canonical id of a tools/call request (method "tools/call") or the
// canonical requestId of a notifications/cancelled notification. ok is false
// for anything else, including batches, responses and malformed JSON.
func sniffCall(body []byte) (id []byte, method string, ok bool) {
	if len(body) == 0 || len(body) > maxTraceSniff {
		return nil, "", false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var p jsonrpcProbe
	if err := dec.Decode(&p); err != nil || dec.More() {
		return nil, "", false
	}
	if _, err := dec.Token(); err == nil {
		return nil, "", false // trailing data
	}
	if p.JSONRPC != "2.0" {
		return nil, "", false
	}
	var raw json.RawMessage
	switch p.Method {
	case "tools/call":
		raw = p.ID
	case "notifications/cancelled":
		if p.ID != nil || p.Params == nil {
			return nil, "", false
		}
		raw = p.Params.RequestID
	default:
		return nil, "", false
	}
	c, ok := canonicalID(raw)
	if !ok {
		return nil, "", false
	}
	return c, p.Method, true
}

// canonicalID returns a canonical form of a JSON-RPC id: a string or an
// integer (as the SDK sends). Anything else (null, float, object) is not an
// id a call can be bound to.
func canonicalID(raw json.RawMessage) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false
		}
		b, _ := json.Marshal(s)
		return append([]byte("s"), b...), true
	default:
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, false
		}
		i, err := n.Int64()
		if err != nil {
			return nil, false
		}
		b, _ := json.Marshal(i)
		return append([]byte("n"), b...), true
	}
}
