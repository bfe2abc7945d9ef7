// Package wiretest holds what the tests of the transports and of
// jsonrpcwire share to compare decoded JSON-RPC messages: the same
// comparison wherever a decoder is checked against the go-sdk's.
package wiretest

import (
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Diff reports how got differs from want, field by field, or "" when
// they are the same message: the same kind (request or response), method,
// id, params, result and error (code, message, data), with a nil raw field
// distinct from an empty one. Raw fields are compared byte for byte.
func Diff(want, got jsonrpc.Message) string {
	switch w := want.(type) {
	case *jsonrpc.Request:
		g, ok := got.(*jsonrpc.Request)
		if !ok {
			return fmt.Sprintf("a request decoded as %T", got)
		}
		switch {
		case w.Method != g.Method:
			return fmt.Sprintf("method %q, want %q", g.Method, w.Method)
		case w.ID.Raw() != g.ID.Raw():
			return fmt.Sprintf("id %v, want %v", g.ID.Raw(), w.ID.Raw())
		case string(w.Params) != string(g.Params) || (w.Params == nil) != (g.Params == nil):
			return fmt.Sprintf("params %q (nil %v), want %q (nil %v)", g.Params, g.Params == nil, w.Params, w.Params == nil)
		}
		return ""
	case *jsonrpc.Response:
		g, ok := got.(*jsonrpc.Response)
		if !ok {
			return fmt.Sprintf("a response decoded as %T", got)
		}
		switch {
		case w.ID.Raw() != g.ID.Raw():
			return fmt.Sprintf("id %v, want %v", g.ID.Raw(), w.ID.Raw())
		case string(w.Result) != string(g.Result) || (w.Result == nil) != (g.Result == nil):
			return fmt.Sprintf("result %q (nil %v), want %q (nil %v)", g.Result, g.Result == nil, w.Result, w.Result == nil)
		}
		if w.Error == nil {
			if g.Error != nil {
				return "an error where none was wanted"
			}
			return ""
		}
		var we, ge *jsonrpc.Error
		if !errors.As(w.Error, &we) {
			return fmt.Sprintf("the wanted error is a %T", w.Error)
		}
		if g.Error == nil || !errors.As(g.Error, &ge) {
			return fmt.Sprintf("error %T, want a *jsonrpc.Error", g.Error)
		}
		switch {
		case we.Code != ge.Code:
			return fmt.Sprintf("error code %d, want %d", ge.Code, we.Code)
		case we.Message != ge.Message:
			return fmt.Sprintf("error message %q, want %q", ge.Message, we.Message)
		case string(we.Data) != string(ge.Data) || (we.Data == nil) != (ge.Data == nil):
			return fmt.Sprintf("error data %q (nil %v), want %q (nil %v)", ge.Data, ge.Data == nil, we.Data, we.Data == nil)
		}
		return ""
	default:
		return fmt.Sprintf("unexpected message type %T", want)
	}
}
