// Package sdkjson holds what the go-sdk v1.8.0 does with JSON that
// mcpsession and mcpserve must do alike where they read or write messages
// of their own beside the SDK's: its encoding of params and results
// (Marshal) and its decoder's nesting bound (MaxDepth, TooDeep).
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

// MaxDepth is the nesting of arrays and objects the SDK's decoder
// (internal/json, v1.8.0) accepts in one value.
const MaxDepth = 1000

// TooDeep reports whether the arrays and objects of data nest deeper than
// MaxDepth, counted as the SDK's decoder counts them before it decodes:
// every '{' and '[' outside a string opens one, every '}' and ']' closes
// one, never below 0. It reads data once and allocates nothing.
func TooDeep(data []byte) bool {
	depth := 0
	inString, escaped := false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > MaxDepth {
				return true
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}
