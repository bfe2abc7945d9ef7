package mcpserve

import (
	"encoding/json"
	"errors"
)

// errMalformedResult is wireJSON's error for content or structured
// content that is not one JSON value.
var errMalformedResult = errors.New("mcpserve: a result part is not JSON")

// wireJSON is the JSON of a CallToolResult with content, structured
// content (omitted when empty) and isError (omitted when false), joined
// from the parts as they are: each part is checked to be one valid JSON
// value (json.Valid, no copy), where json.Marshal of a wireResult would
// check, compact and copy them.
func wireJSON(content, structured json.RawMessage, isError bool) ([]byte, error) {
	if !json.Valid(content) || (len(structured) > 0 && !json.Valid(structured)) {
		return nil, errMalformedResult
	}
	raw := make([]byte, 0, len(content)+len(structured)+48)
	raw = append(raw, `{"content":`...)
	raw = append(raw, content...)
	if len(structured) > 0 {
		raw = append(raw, `,"structuredContent":`...)
		raw = append(raw, structured...)
	}
	if isError {
		raw = append(raw, `,"isError":true`...)
	}
	return append(raw, '}'), nil
}
