package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSkipValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		at   int
		want int
	}{
		{`"a\"b" ,`, 0, 6},
		{`{"a":[1,"]}"],"b":{}} x`, 0, 21},
		{`[[],[[]]]`, 0, 9},
		{`123,4`, 0, 3},
		{`true}`, 0, 4},
		{`null`, 0, 4},
		{`  {}`, 2, 4},
		{`{"a":"`, 0, -1},
		{`[1,2`, 0, -1},
		{`"abc`, 0, -1},
		{`,`, 0, -1},
		{``, 0, -1},
		{`{}`, 5, -1},
	} {
		assert.Equal(t, tc.want, SkipValue([]byte(tc.in), tc.at), "%q at %d", tc.in, tc.at)
	}
	assert.Equal(t, 3, SkipSpace([]byte(" \t\nx"), 0))
	assert.Equal(t, 2, SkipSpace([]byte("  "), 0))
}

// FuzzSkipValue: on any valid JSON value followed by a delimiter,
// SkipValue ends where encoding/json's decoder ends the value; on any
// input it stays within bounds.
func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,"]}\"x"]}`, `"\\"`, `-1.5e3`, `[[[]]]`, `{"a":`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		end := SkipValue(b, 0)
		if end < -1 || end > len(b) {
			t.Fatalf("SkipValue out of bounds: %d of %d", end, len(b))
		}
		if len(b) == 0 || !json.Valid(b) || b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r' {
			return
		}
		in := append(bytes.TrimRight(b, " \t\r\n"), ',')
		dec := json.NewDecoder(bytes.NewReader(in))
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return
		}
		if got, want := SkipValue(in, 0), int(dec.InputOffset()); got != want {
			t.Fatalf("SkipValue(%q) = %d, encoding/json ends it at %d", in, got, want)
		}
	})
}
