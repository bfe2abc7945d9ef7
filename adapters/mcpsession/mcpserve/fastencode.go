package mcpserve

import (
	"bytes"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/adapters/mcpsession/internal/sdkjson"
	"github.com/mcpward/mcpward/core/jsontext"
)

// resultFrames are the bytes around a text-only tool result's content
// list as the SDK encodes it (sdkjson.Marshal for a legacy session,
// marshalModern for a 2026-07-28 one), for isError false and true: each
// is the SDK's own encoding of a result with an empty content list, cut
// at that list. Made once per Server (the modern ones hold its
// implementation, which does not change).
type resultFrames struct {
	once sync.Once
	// head and tail, by [modern][isError]; ok is false when a frame
	// could not be cut (encodeText then declines every result).
	head, tail [2][2][]byte
	ok         bool
}

// emptyContent is the empty content list in a result's encoding.
const emptyContent = `"content":[]`

// frames returns s's result frames, made on first use.
func (s *Server) frames() *resultFrames {
	f := &s.resFrames
	f.once.Do(func() {
		f.ok = true
		for m := range 2 {
			for e := range 2 {
				res := &mcp.CallToolResult{Content: []mcp.Content{}, IsError: e == 1}
				var b []byte
				var err error
				if m == 1 {
					b, err = s.marshalModern(res)
				} else {
					b, err = sdkjson.Marshal(res)
				}
				i := bytes.LastIndex(b, []byte(emptyContent))
				if err != nil || i < 0 {
					f.ok = false
					return
				}
				open := i + len(emptyContent) - 2 // the list's '['
				f.head[m][e] = bytes.Clone(b[:open])
				f.tail[m][e] = bytes.Clone(b[open+2:])
			}
		}
	})
	return f
}

// encodeText is the encoding of res that the fast path writes (the SDK's
// encoding: sdkjson.Marshal of res for a legacy session, marshalModern for
// a modern one) without reflection, for the result a forwarded call
// mostly has: a content list (not nil) of text blocks alone, each without
// _meta or annotations (each text written as encoding/json writes it,
// jsontext.AppendString), and no _meta, structured content, input
// requests or request state. ok is false for any other result (the caller encodes it as
// before). res comes from the fast path's own handler, which the SDK
// never sees, so its unexported result type is unset, as marshalModern
// also assumes. FuzzEncodeText checks it byte for byte against the
// SDK's encoding.
func (s *Server) encodeText(res *mcp.CallToolResult, modern bool) ([]byte, bool) {
	if res == nil || res.Content == nil || len(res.Meta) > 0 || res.StructuredContent != nil || res.InputRequests != nil || res.RequestState != "" {
		return nil, false
	}
	n := 0
	for _, c := range res.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok || t == nil || len(t.Meta) > 0 || t.Annotations != nil {
			return nil, false
		}
		n += len(t.Text) + len(`{"type":"text","text":""},`) + 8
	}
	f := s.frames()
	if !f.ok {
		return nil, false
	}
	m, e := 0, 0
	if modern {
		m = 1
	}
	if res.IsError {
		e = 1
	}
	head, tail := f.head[m][e], f.tail[m][e]
	b := make([]byte, 0, len(head)+n+len(tail)+2)
	b = append(b, head...)
	b = append(b, '[')
	for i, c := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		// The SDK encodes a text block with json.Marshal: HTML escaped.
		b = append(b, `{"type":"text","text":`...)
		b = jsontext.AppendString(b, c.(*mcp.TextContent).Text)
		b = append(b, '}')
	}
	b = append(b, ']')
	return append(b, tail...), true
}
