// Package sdkjson encodes values as the go-sdk v1.8.0 encodes the params
// and results it sends, for the places mcpsession and mcpserve write
// messages of their own beside the SDK's and must write the same bytes.
package sdkjson

import (
	"bytes"
	"encoding/json"
)

// Marshal encodes v as the SDK's jsonrpc2 encodes a request's params or a
// response's result: encoding/json without HTML escaping, with no
// trailing newline. Its error is encoding/json's. Safe for concurrent use.
func Marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
