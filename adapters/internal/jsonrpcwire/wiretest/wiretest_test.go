package wiretest

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
)

func TestDiff(t *testing.T) {
	id := func(v any) jsonrpc.ID { i, _ := jsonrpc.MakeID(v); return i }
	req := func(m string, i any, p string) *jsonrpc.Request {
		r := &jsonrpc.Request{Method: m, ID: id(i)}
		if p != "-" {
			r.Params = []byte(p)
		}
		return r
	}
	werr := func(code int64, msg, data string) *jsonrpc.Response {
		e := &jsonrpc.Error{Code: code, Message: msg}
		if data != "-" {
			e.Data = []byte(data)
		}
		return &jsonrpc.Response{ID: id(1.0), Error: e}
	}
	for _, tc := range []struct {
		name      string
		want, got jsonrpc.Message
		same      bool
	}{
		{"same request", req("ping", 1.0, "{}"), req("ping", 1.0, "{}"), true},
		{"method", req("ping", 1.0, "{}"), req("pong", 1.0, "{}"), false},
		{"id kind", req("ping", 1.0, "{}"), req("ping", "1", "{}"), false},
		{"params", req("ping", 1.0, `{"a":1}`), req("ping", 1.0, `{"a":2}`), false},
		{"nil params vs empty", req("ping", 1.0, "-"), req("ping", 1.0, ""), false},
		{"kind", req("ping", 1.0, "{}"), &jsonrpc.Response{ID: id(1.0)}, false},
		{"same result", &jsonrpc.Response{ID: id(1.0), Result: []byte("{}")}, &jsonrpc.Response{ID: id(1.0), Result: []byte("{}")}, true},
		{"result", &jsonrpc.Response{ID: id(1.0), Result: []byte("{}")}, &jsonrpc.Response{ID: id(1.0), Result: []byte("[]")}, false},
		{"same error", werr(-1, "m", "3"), werr(-1, "m", "3"), true},
		{"error code", werr(-1, "m", "-"), werr(-2, "m", "-"), false},
		{"error message", werr(-1, "m", "-"), werr(-1, "n", "-"), false},
		{"error data nil", werr(-1, "m", "-"), werr(-1, "m", ""), false},
		{"error missing", werr(-1, "m", "-"), &jsonrpc.Response{ID: id(1.0)}, false},
		{"error unwanted", &jsonrpc.Response{ID: id(1.0)}, werr(-1, "m", "-"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Diff(tc.want, tc.got)
			if tc.same {
				assert.Empty(t, d)
			} else {
				assert.NotEmpty(t, d)
			}
		})
	}
}
