package mcpsession

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/refusal"
)

// op names the request an error came from, with its reasons.
type op struct {
	// rejected is the Reason of a JSON-RPC error reply (Class Protocol).
	rejected string
	// abandoned is the Reason when the caller's ctx ended in flight.
	abandoned string
	// fallback is the Class and Reason of an error nothing else explains.
	fallbackClass refusal.Class
	fallback      string
}

var (
	opConnect = op{rejected: "initialize_rejected", abandoned: "connect_abandoned", fallbackClass: refusal.Transient, fallback: "connect_failed"}
	opList    = op{rejected: "list_rejected", abandoned: "list_abandoned", fallbackClass: refusal.Protocol, fallback: "malformed_reply"}
	opCall    = op{rejected: "call_rejected", abandoned: "call_abandoned", fallbackClass: refusal.Protocol, fallback: "malformed_reply"}
)

// errMalformed marks a reply mcpsession could not re-encode, or one the
// SDK panicked decoding.
var errMalformed = errors.New("mcpsession: malformed reply")

// guarded returns f guarded against a panic: the go-sdk decodes a result
// in the goroutine that awaits it, and some of its decoders panic on
// crafted input (v1.8.0: an inputRequests entry that is null). A panic
// there is a reply that does not decode (errMalformed, Protocol
// "malformed_reply"), never the host's crash.
func guarded[P, R any](f func(context.Context, P) (R, error)) func(context.Context, P) (R, error) {
	return func(ctx context.Context, p P) (R, error) {
		return noPanic(func() (R, error) { return f(ctx, p) })
	}
}

// noPanic runs f, a decoding of a server's bytes (by the SDK's decoders or
// with them), and makes a panic in it errMalformed with R's zero value:
// the one place the session recovers, at the boundary where one server's
// reply meets a decoder, so that a crafted reply is that server's
// malformed_reply and never the host's crash.
func noPanic[R any](f func() (R, error)) (res R, err error) {
	defer func() {
		if recover() != nil {
			var zero R
			res, err = zero, errMalformed
		}
	}()
	return f()
}

// classify maps an SDK error to a refusal. The Conn's hook decides first
// (ClassifyConnect for an error of the handshake when it is set, Classify
// otherwise); when it has no hook, returns nil, or returns Class Internal
// (it did not recognise the error — typically a JSON-RPC error reply,
// which is not a transport matter), mcpsession's own mapping decides.
// Neither ever copies err's text.
func (s *session) classify(err error, o op) *refusal.Error {
	hook := s.conn.Classify
	if o == opConnect && s.conn.ClassifyConnect != nil {
		hook = s.conn.ClassifyConnect
	}
	if hook != nil {
		if re := hook(err); re != nil && re.Class != refusal.Internal {
			return s.stamp(re)
		}
	}
	return s.stamp(ownClassify(err, o))
}

// ownClassify is mcpsession's origin-free mapping of SDK errors; the
// caller stamps server and origin.
func ownClassify(err error, o op) *refusal.Error {
	if re := refusalOf(err); re != nil {
		c := *re
		return &c
	}
	switch {
	case errors.Is(err, errMalformed):
		return &refusal.Error{Class: refusal.Protocol, Reason: "malformed_reply"}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ctxRefusal(err, "", "")
	case errors.Is(err, mcp.ErrSessionMissing):
		return &refusal.Error{Class: refusal.Transient, Reason: "session_missing", Detail: "the server no longer knows the session"}
	case errors.Is(err, mcp.ErrConnectionClosed), isClosedErr(err):
		return &refusal.Error{Class: refusal.Transient, Reason: "connection_closed"}
	case isMalformed(err):
		return &refusal.Error{Class: refusal.Protocol, Reason: "malformed_message", Detail: "the server sent a message that is not JSON-RPC"}
	case o == opCall && isUnknownContent(err):
		// The SDK refuses a result with a block of a type the protocol
		// does not define, as core/catalog would.
		return &refusal.Error{Class: refusal.Protocol, Reason: "unknown_content_type"}
	case isResultMismatch(err):
		// A JSON-RPC reply whose result is not the request's (initialize
		// included: the same server answers the same again).
		return &refusal.Error{Class: refusal.Protocol, Reason: "malformed_reply"}
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		switch we.Code {
		case -32005: // rejected by transport: network, 429/5xx, round-tripper errors
			return &refusal.Error{Class: refusal.Transient, Reason: "transport_rejected"}
		case -32003, -32004: // client / server closing
			return &refusal.Error{Class: refusal.Transient, Reason: "connection_closed"}
		case mcp.CodeUnsupportedProtocolVersion:
			if o == opConnect {
				return &refusal.Error{Class: refusal.Protocol, Reason: "protocol_version_refused", Detail: "server refused the protocol version"}
			}
		}
		return &refusal.Error{Class: refusal.Protocol, Reason: o.rejected, Detail: codePhrase(we.Code)}
	}
	if o == opConnect {
		var ee *exec.Error
		var pe *fs.PathError
		if errors.As(err, &ee) || errors.Is(err, exec.ErrNotFound) || errors.As(err, &pe) {
			return &refusal.Error{Class: refusal.Config, Reason: "spawn_failed"}
		}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return &refusal.Error{Class: refusal.Transient, Reason: "network_error"}
	}
	return &refusal.Error{Class: o.fallbackClass, Reason: o.fallback}
}

// sdkMalformedPhrases are fixed phrases of the go-sdk's (v1.8.0) errors
// for what a server sent that does not decode as a JSON-RPC message: they
// are plain errors, so only their text tells them apart (it is matched,
// never copied). TestMalformedMessages fails if a newer SDK changes them.
var sdkMalformedPhrases = []string{
	"failed to decode response",          // a JSON reply body (mcp/streamable.go)
	"failed to decode event",             // an SSE event's data (mcp/streamable.go)
	"unsupported content type",           // a reply neither JSON nor SSE (mcp/streamable.go)
	"malformed line in SSE stream",       // an SSE line without a field (mcp/event.go)
	"invalid message version tag",        // JSON that is not JSON-RPC 2.0 (internal/jsonrpc2)
	"unmarshaling jsonrpc message",       // likewise
	"invalid trailing data",              // a stdio line with more than one value (mcp/transport.go)
	"JSON-RPC batching is not supported", // a batch at a version without batches
}

// isMalformed reports an SDK error for a message that does not decode: a
// JSON syntax error in the chain, or one of sdkMalformedPhrases.
func isMalformed(err error) bool {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return true
	}
	msg := err.Error()
	for _, p := range sdkMalformedPhrases {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// isResultMismatch reports a JSON type error in err's chain: a result that
// is JSON-RPC but not of the request's result type.
func isResultMismatch(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

// isClosedErr reports the errors a stream gives once its peer is gone.
func isClosedErr(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, os.ErrClosed) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNRESET)
}

// codePhrase is the fixed phrase for a JSON-RPC error code. The server's
// message is never used here; withServerMessage adds it, masked, escaped
// and cut, to the refusal of a call, prompt or read.
func codePhrase(code int64) string {
	switch code {
	case jsonrpc.CodeParseError:
		return "parse error"
	case jsonrpc.CodeInvalidRequest:
		return "invalid request"
	case jsonrpc.CodeMethodNotFound:
		return "method not found"
	case jsonrpc.CodeInvalidParams:
		return "invalid params"
	case jsonrpc.CodeInternalError:
		return "internal error"
	case mcp.CodeResourceNotFound:
		return "resource not found"
	case mcp.CodeUnsupportedProtocolVersion:
		return "unsupported protocol version"
	case mcp.CodeMissingRequiredClientCapabilities:
		return "missing required client capabilities"
	case mcp.CodeURLElicitationRequired:
		return "url elicitation required"
	}
	return "error reply"
}

// refusalOf returns the first *refusal.Error in err's chain, or nil.
func refusalOf(err error) *refusal.Error {
	var re *refusal.Error
	if errors.As(err, &re) {
		return re
	}
	return nil
}

// dialRefusal maps a Dialer error: its refusal (stamped with the server id
// when it has none), or Class Internal "dial_failed".
func dialRefusal(err error, server string) *refusal.Error {
	if re := refusalOf(err); re != nil {
		c := *re
		if c.Server == "" {
			c.Server = server
		}
		return &c
	}
	return &refusal.Error{Class: refusal.Internal, Reason: "dial_failed", Server: server}
}

func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// ctxRefusal maps a context error: Class Transient, Reason
// "deadline_exceeded" or "canceled".
func ctxRefusal(err error, server, origin string) *refusal.Error {
	reason := "canceled"
	if errors.Is(err, context.DeadlineExceeded) {
		reason = "deadline_exceeded"
	}
	return &refusal.Error{Class: refusal.Transient, Reason: reason, Server: server, Origin: origin}
}

// ctxDetail is the fixed phrase for a context error.
func ctxDetail(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "context deadline exceeded"
	}
	return "context canceled"
}

// unsupportedVersionType is the SDK's unexported error type for an
// initialize reply naming a version it does not know (mcp/client.go,
// unsupportedProtocolVersionError). It is matched by type name because it
// is not exported; TestConnectVersion fails if a newer SDK renames it.
const unsupportedVersionType = "unsupportedProtocolVersionError"

var mcpPkgPath = reflect.TypeFor[mcp.Implementation]().PkgPath()

// isUnsupportedVersion reports whether err's chain holds the SDK's
// unsupported-protocol-version error.
func isUnsupportedVersion(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		t := reflect.TypeOf(e)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Name() == unsupportedVersionType && t.PkgPath() == mcpPkgPath {
			return true
		}
	}
	return false
}
