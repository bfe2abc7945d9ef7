package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParamsAndDetail(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["q"],"properties":{
		"q":{"type":"string","description":"what to look for\nmore"},
		"limit":{"type":["integer","null"]},
		"tags":{"type":"array","items":{"type":"string"}},
		"mode":{"enum":["a","b"]},
		"x\u001b[2J":{}}}`)
	ps := Params(schema)
	assert.Equal(t, []Param{
		{Name: "q", Type: "string", Required: true, Description: "what to look for\nmore"},
		{Name: "limit", Type: "integer or null"},
		{Name: "mode", Type: "any (one of 2 values)"},
		{Name: "tags", Type: "array of string"},
		{Name: "x\x1b[2J", Type: "any"},
	}, ps)
	var b strings.Builder
	WriteDetail(&b, ToolDetail{Server: "s", Tool: "find", Name: "mcp__s__find", Description: "Finds.\n\nSecond line.", Parameters: ps})
	assert.Equal(t, `s/find (mcp__s__find)
  Finds.
  Second line.
  parameters:
    q         string                 required  what to look for
    limit     integer or null        optional
    mode      any (one of 2 values)  optional
    tags      array of string        optional
    x\x1b[2J  any                    optional
`, b.String())
	assert.Nil(t, Params(json.RawMessage(`not json`)))
}
