package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxDynamicName bounds the names tool_add accepts.
const maxDynamicName = 64

// Tool inputs of -dynamic.
type (
	toolAddArgs struct {
		Name  string `json:"name" jsonschema:"the name of the tool to add or replace"`
		Field string `json:"field" jsonschema:"the one required string argument of the new tool"`
	}
	toolRemoveArgs struct {
		Name string `json:"name" jsonschema:"the name of the tool to remove"`
	}
)

// addDynamicTools adds the tools of -dynamic, which change the server's
// tool list at run time (every change sends notifications/tools/list_changed
// to the connected client):
//
//	tool_add     {name, field: string} → adds the tool name, or replaces it
//	                                     (a changed schema when field differs),
//	                                     whose one required string argument is
//	                                     field and which returns its value
//	tool_remove  {name: string}        → removes the tool name (any tool,
//	                                     the built-in ones too)
//
// A name must be 1 to 64 characters of a-z, A-Z, 0-9, "_" and "-", and so
// must field.
func addDynamicTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "tool_add", Description: "Adds (or replaces) a tool taking one required string argument, which it returns."},
		func(_ context.Context, _ *mcp.CallToolRequest, in toolAddArgs) (*mcp.CallToolResult, any, error) {
			if !plainName(in.Name) || !plainName(in.Field) {
				return errorResult("name and field must be 1 to 64 characters of a-z, A-Z, 0-9, _ and -"), nil, nil
			}
			field := in.Field
			s.AddTool(&mcp.Tool{
				Name:        in.Name,
				Description: "Returns its " + field + " argument.",
				InputSchema: &jsonschema.Schema{
					Type:                 "object",
					Properties:           map[string]*jsonschema.Schema{field: {Type: "string"}},
					Required:             []string{field},
					AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
				},
			}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var args map[string]string
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return errorResult("the arguments must be an object of strings"), nil
				}
				v, ok := args[field]
				if !ok {
					return errorResult(fmt.Sprintf("missing argument %q", field)), nil
				}
				return textResult(v), nil
			})
			return textResult("added " + in.Name), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "tool_remove", Description: "Removes a tool."},
		func(_ context.Context, _ *mcp.CallToolRequest, in toolRemoveArgs) (*mcp.CallToolResult, any, error) {
			s.RemoveTools(in.Name)
			return textResult("removed " + in.Name), nil, nil
		})
}

// plainName reports whether s is 1 to maxDynamicName characters of a-z,
// A-Z, 0-9, "_" and "-".
func plainName(s string) bool {
	if s == "" || len(s) > maxDynamicName {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// errorResult is a tool result with isError set, holding one text content.
func errorResult(text string) *mcp.CallToolResult {
	r := textResult(text)
	r.IsError = true
	return r
}
