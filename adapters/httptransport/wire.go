package httptransport

import (
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpward/mcpward/adapters/internal/jsonrpcwire"
)

// decodeMessage decodes one JSON-RPC message with the shared decoder;
// data is not retained.
func decodeMessage(data []byte) (jsonrpc.Message, error) { return jsonrpcwire.Decode(data) }

// appendMessage appends msg's encoding to dst with the shared encoder.
func appendMessage(dst []byte, msg jsonrpc.Message) ([]byte, error) {
	return jsonrpcwire.Append(dst, msg)
}
