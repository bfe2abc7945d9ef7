package mcpsession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/mcpward/mcpward/adapters/mcpsession/internal/sdkjson"
	"github.com/mcpward/mcpward/core/jsontext"
	"github.com/mcpward/mcpward/ports"
)

// A tools/list page over the session's own request path (rawrequest.go).
//
// The SDK's ListTools awaits the page through its sending middleware and
// decodes the result with encoding/json into an *mcp.ListToolsResult (its
// Await: json.Unmarshal of the response's result; the type has no
// UnmarshalJSON of its own), then filters the tools (filterValidTools).
// listToolsRaw sends the same request (the params the SDK would encode,
// _meta included: appendParamsOpen) and decodes the page's raw result
// once, with the same call on the same type, so the tools are decoded
// alike, and the caching hints are read as takeCacheHints reads them.
//
// A page the SDK's filter cannot change (headerFree: no null tool, no
// x-mcp-header annotation) is taken as it is, its tools' schemas kept as
// the bytes received where that gives what the SDK's trees give
// (decodeToolsPage, listpage.go; any other page is decoded here into the
// SDK's trees as before). Any other page is not
// judged here: listTools hands the page it decoded to the SDK's ListTools
// through injectPage, a sending middleware that answers that one
// tools/list with it instead of sending anything, so the SDK's filter
// decides what it excludes and logs the exclusions to the dropLog as
// before, without a second request to the server, and the SDK's rules
// stay the only ones (they are unexported, and re-implementing them would
// have to be proven equal on every input). FuzzListToolsTaken checks the
// whole: List over this path gives what the SDK's ListTools alone gives,
// on any page.

// methodListTools is the method of a tools listing page.
const methodListTools = "tools/list"

// listToolsParams returns the params of a tools/list request for cursor
// as the SDK's client session would encode them, or false when the
// session cannot (see appendParamsOpen).
func (s *session) listToolsParams(cursor string) (json.RawMessage, bool) {
	b, ok := s.appendParamsOpen(make([]byte, 0, 256+len(cursor)), nil)
	if !ok {
		return nil, false
	}
	if cursor == "" {
		if b[len(b)-1] == ',' {
			b = b[:len(b)-1]
		}
		return append(b, '}'), true
	}
	b = append(b, `"cursor":`...)
	b = jsontext.AppendStringNoHTML(b, cursor)
	return append(b, '}'), true
}

// listToolsRaw lists one tools page over the session's own path. ok is
// false when the page must go through the SDK's ListTools (no own path,
// params the session cannot encode, or a page the SDK's filter may
// change); then left, when not nil, is the page as received and decoded,
// for the SDK's ListTools to decide without asking again (injectPage),
// and nothing else of the page is returned. Otherwise err is the error as
// the SDK's ListTools would have returned it (s.failure classifies it),
// or nil with the page. The caller holds toolsMu.
func (s *session) listToolsRaw(ctx context.Context, cursor string) (_ ports.Page, left *mcp.ListToolsResult, ok bool, _ error) {
	if s.raw == nil {
		return ports.Page{}, nil, false, nil
	}
	params, ok := s.listToolsParams(cursor)
	if !ok {
		return ports.Page{}, nil, false, nil
	}
	raw, err := s.roundTrip(ctx, methodListTools, params)
	if errors.Is(err, errRawUnavailable) {
		return ports.Page{}, nil, false, nil
	}
	if err != nil {
		return ports.Page{}, nil, true, err
	}
	var res *mcp.ListToolsResult
	rp, tools, ok := decodeToolsPage(raw) // listpage.go
	if ok {
		res = &rp.ListToolsResult
	} else {
		if res, err = decodeListTools(raw); err != nil {
			return ports.Page{}, nil, true, err
		}
		if !headerFree(res.Tools) {
			return ports.Page{}, res, false, nil
		}
		tools = make([]ports.ToolItem, len(res.Tools))
		for i, t := range res.Tools {
			tools[i] = toolItem(t)
		}
	}
	if t, ok := ctx.Value(cacheTakeKey{}).(*cacheTake); ok && t != nil {
		t.ttlMs, t.scope, t.taken = res.TTLMs, res.CacheScope, true
	}
	return ports.Page{Tools: tools, NextCursor: res.NextCursor}, nil, true, nil
}

// injectPage is the innermost sending middleware: a tools/list whose ctx
// carries a page (pageInjectKey, put there by listTools alone, for the
// one ListTools it makes with a page its own path received) is answered
// with that page, and nothing is sent. Every outer middleware and the
// SDK's ListTools then see it as they see a page from the server.
func injectPage(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == methodListTools {
			if r, ok := ctx.Value(pageInjectKey{}).(*mcp.ListToolsResult); ok && r != nil {
				return r, nil
			}
		}
		return next(ctx, method, req)
	}
}

type pageInjectKey struct{}

// decodeListTools decodes a tools/list result as the SDK's client session
// does (its internal/json.Unmarshal, v1.8.0: a nesting bound of
// sdkjson.MaxDepth, then segmentio/encoding/json matching field names
// case-sensitively, into an *mcp.ListToolsResult, which has no
// UnmarshalJSON of its own; see parseAsSDK), its error wrapped as the SDK
// wraps it; a panic in the decoder is errMalformed. encoding/json would
// not do: it matches field names case-insensitively ({"Tools":[...]}
// would list tools the SDK does not see) and has another depth bound.
func decodeListTools(raw json.RawMessage) (*mcp.ListToolsResult, error) {
	return noPanic(func() (*mcp.ListToolsResult, error) {
		if sdkjson.TooDeep(raw) {
			return nil, fmt.Errorf("calling %q: %w", methodListTools, errTooDeep)
		}
		res := new(mcp.ListToolsResult)
		if err := parseAsSDK(raw, res); err != nil {
			return nil, fmt.Errorf("calling %q: %w", methodListTools, err)
		}
		return res, nil
	})
}

// parseAsSDK decodes the one JSON value raw (a result the transport
// already took out of its envelope) into v as the SDK's decoder does:
// segmentio's Decoder.Decode is readValue (finding the value's end in a
// copy of the input it reads) and then Parse of that value with the
// decoder's flags; Parse on raw itself does the second without the copy.
func parseAsSDK(raw []byte, v any) error {
	_, err := segjson.Parse(raw, v, segjson.DontMatchCaseInsensitiveStructFields)
	return err
}

// errTooDeep is decodeListTools' error for a result nested deeper than the
// SDK decodes.
var errTooDeep = errors.New("json: nested too deep")
