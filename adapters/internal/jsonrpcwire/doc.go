// Package jsonrpcwire is the JSON-RPC 2.0 wire codec mcpward's transports
// share: Decode turns one JSON text into the go-sdk's jsonrpc.Request or
// jsonrpc.Response exactly as jsonrpc.DecodeMessage would, with a
// validating single-pass scanner instead of the SDK's reflective decoder
// (which builds a fresh decoder and its buffers for every message), and
// Append writes a message as jsonrpc.EncodeMessage does, into the caller's
// buffer.
//
// Framing is the transports' own: the stdio transport splits lines and
// decides what a line may hold besides its message; the Streamable HTTP
// transport splits bodies and server-sent events. Both hand this package
// one JSON text at a time.
//
// It lives under adapters/internal so that every adapter, and nothing
// outside adapters/, may import it (the dependency rule,
// core/deprule_test.go, checks it too); it imports only the standard
// library, core/jsontext and the go-sdk's jsonrpc package.
package jsonrpcwire

// ErrMalformed matches (under errors.Is) every error Decode returns: data
// that is not one JSON-RPC 2.0 message. The more specific errors below say
// why; none holds a byte of the data.
var ErrMalformed error = malformed("malformed JSON-RPC message")

var (
	// ErrTruncated is a text that ends inside a JSON value (an empty or
	// all-whitespace text too). A framer reading a stream may wait for
	// more bytes on it; to Decode's caller it is a malformed message.
	ErrTruncated error = malformed("the JSON text ends inside a value")
	// ErrSyntax is a text that is not JSON.
	ErrSyntax error = malformed("the text is not JSON")
	// ErrTooDeep is JSON nested deeper than the SDK's decoder accepts
	// (1000 levels, the message object included).
	ErrTooDeep error = malformed("the message nests too deeply")
	// ErrNotMessage is JSON that is not one JSON-RPC 2.0 message: not an
	// object, a "jsonrpc" member other than "2.0", a member of the wrong
	// type, a response without an id, or a batch.
	ErrNotMessage error = malformed("the JSON text is not a JSON-RPC 2.0 message")
	// ErrTrailing is a message followed by more than whitespace.
	ErrTrailing error = malformed("invalid trailing data after the message")
)

// malformed is the type of Decode's errors: each matches ErrMalformed.
type malformed string

func (e malformed) Error() string { return string(e) }

// Is reports whether target is ErrMalformed.
func (e malformed) Is(target error) bool { return target == ErrMalformed }
