package mcpsession

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// decodeCallResult decodes raw as the SDK's client session decodes a
// tools/call result. Its error is shaped as the SDK's (classified by
// s.failure the same way); a panic of the SDK's decoder is errMalformed,
// as guarded makes it.
func decodeCallResult(raw json.RawMessage) (res *mcp.CallToolResult, err error) {
	defer func() {
		if recover() != nil {
			res, err = nil, errMalformed
		}
	}()
	res = new(mcp.CallToolResult)
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, fmt.Errorf("calling %q: %w", methodCallTool, err)
	}
	return res, nil
}

// methodCallTool is the method of a tool call.
const methodCallTool = "tools/call"

