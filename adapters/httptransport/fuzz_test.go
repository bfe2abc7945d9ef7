package httptransport

import (
	"bufio"
	"bytes"
	"net/http"
	"net/textproto"
	"regexp"
	"testing"
)

var traceparentRE = regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`)

func FuzzValidTraceparent(f *testing.F) {
	for _, s := range []string{tp1, tp2, "", "00-" + string(make([]byte, 52)), "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tp string) {
		want := traceparentRE.MatchString(tp) &&
			tp[3:35] != "00000000000000000000000000000000" && tp[36:52] != "0000000000000000"
		if got := ValidTraceparent(tp); got != want {
			t.Fatalf("ValidTraceparent(%q) = %v, want %v", tp, got, want)
		}
	})
}

func FuzzSniffCall(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`[{"jsonrpc":"2.0","id":7,"method":"tools/call"}]`,
		`{"jsonrpc":"2.0","id":1e3,"method":"tools/call"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		id, method, ok := sniffCall(body)
		in := &traceIntent{tp: tp1}
		got := in.traceFor(body)
		if !ok {
			if got != "" {
				t.Fatalf("traceparent for an unrecognised body")
			}
			return
		}
		if method != "tools/call" && method != "notifications/cancelled" {
			t.Fatalf("method %q", method)
		}
		if len(id) == 0 || (id[0] != 's' && id[0] != 'n') {
			t.Fatalf("id %q not canonical", id)
		}
		// A fresh intent binds only to a call, never to a cancellation.
		if (method == "tools/call") != (got == tp1) {
			t.Fatalf("method %q gave %q", method, got)
		}
	})
}

func FuzzCheckHeader(f *testing.F) {
	for _, s := range [][2]string{{"X-Ok", "v"}, {"Mcp-Session-Id", "x"}, {"X", "a\r\nB: c"}, {"Authorization", "Bearer t"}, {"bad name", "v"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		if checkHeader(name, []string{value}) != "" {
			return
		}
		if Reserved(name) {
			t.Fatalf("reserved %q accepted", name)
		}
		// An accepted header survives the wire as exactly one header with
		// the same value (modulo the surrounding whitespace HTTP trims).
		var buf bytes.Buffer
		h := http.Header{}
		h.Set(name, value)
		if err := h.Write(&buf); err != nil {
			t.Fatal(err)
		}
		buf.WriteString("\r\n")
		got, err := textproto.NewReader(bufio.NewReader(&buf)).ReadMIMEHeader()
		if err != nil {
			t.Fatalf("accepted header does not parse back: %v", err)
		}
		if len(got) != 1 || len(got[textproto.CanonicalMIMEHeaderKey(name)]) != 1 {
			t.Fatalf("accepted header became %d headers", len(got))
		}
	})
}
