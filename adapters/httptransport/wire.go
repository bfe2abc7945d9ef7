package httptransport

import "github.com/modelcontextprotocol/go-sdk/jsonrpc"

// decodeMessage decodes one JSON-RPC message; data is not retained.
func decodeMessage(data []byte) (jsonrpc.Message, error) { return jsonrpc.DecodeMessage(data) }

// appendMessage appends msg's encoding to dst.
func appendMessage(dst []byte, msg jsonrpc.Message) ([]byte, error) {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}
