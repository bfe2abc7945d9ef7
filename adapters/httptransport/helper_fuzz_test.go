package httptransport

import (
	"encoding/json"
	"net/http"
	"testing"
)

// FuzzHelperOutput checks the header helper's output parser: it never
// panics, it accepts only valid, non-reserved, distinct headers, and what
// it accepts round-trips through JSON to the same headers.
func FuzzHelperOutput(f *testing.F) {
	for _, s := range []string{
		`{"Authorization":"Bearer t"}`,
		`{"x-api-key":"k","authorization":"Bearer t"}`,
		`{"X-A":"1","x-a":"2"}`,
		`{"Mcp-Session-Id":"x"}`,
		`{"Host":"h"}`,
		`{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`,
		`{"X-A":"b\r\nX-B: c"}`,
		`{"X-A":1}`,
		`{"X-A":"b"}{"X-B":"c"}`,
		`{"X-A":"b"} trailing`,
		`{}`,
		`[]`,
		``,
		"{\"X-A\":\"\xff\"}",
		`{"X-\u0041":"b","X-A":"c"}`,
		`{"X-A":{"b":"c"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, reason := parseHelperOutput(b)
		if reason != "" {
			if h != nil {
				t.Fatalf("refused output (%s) returned headers", reason)
			}
			switch reason {
			case ReasonHelperOutputInvalid, ReasonHelperOutputEmpty, ReasonHelperReservedHeader:
			default:
				t.Fatalf("unexpected reason %q", reason)
			}
			return
		}
		if len(h) == 0 {
			t.Fatal("accepted an empty header set")
		}
		flat := make(map[string]string, len(h))
		for k, v := range h {
			if Reserved(k) {
				t.Fatalf("reserved header %q accepted", k)
			}
			if k != http.CanonicalHeaderKey(k) || len(v) != 1 {
				t.Fatalf("header %q not canonical or not single-valued: %d values", k, len(v))
			}
			if r := checkHeader(k, v); r != "" || v[0] == "" {
				t.Fatalf("accepted header %q fails the transport's check: %s", k, r)
			}
			flat[k] = v[0]
		}
		// encoding/json agrees on the content (it would keep the last of
		// duplicate keys, which the parser refuses).
		var std map[string]string
		if err := json.Unmarshal(b, &std); err != nil {
			t.Fatalf("accepted output encoding/json refuses: %v", err)
		}
		if len(std) != len(h) {
			t.Fatalf("encoding/json sees %d keys, parser %d", len(std), len(h))
		}
		for k, v := range std {
			if got := h.Get(k); got != v {
				t.Fatalf("header %q: parser %q, encoding/json %q", k, got, v)
			}
		}
		// Round trip.
		out, err := json.Marshal(flat)
		if err != nil {
			t.Fatal(err)
		}
		h2, reason := parseHelperOutput(out)
		if reason != "" {
			t.Fatalf("re-encoded accepted output refused: %s", reason)
		}
		if len(h2) != len(h) {
			t.Fatalf("round trip changed the header count: %d -> %d", len(h), len(h2))
		}
		for k, v := range h {
			if h2.Get(k) != v[0] {
				t.Fatalf("round trip changed header %q", k)
			}
		}
	})
}
