package jsonrpcwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/internal/jsonrpcwire/wiretest"
)

// requireSameMessage fails the test unless got is the message want is
// (wiretest.Diff).
func requireSameMessage(t *testing.T, want, got jsonrpc.Message) {
	t.Helper()
	if d := wiretest.Diff(want, got); d != "" {
		t.Fatal(d)
	}
}

var envelopeSeeds = []string{
	// Traffic of a session with the stdio fixture server.
	`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"logging":{},"tools":{"listChanged":true}},"protocolVersion":"2025-11-25","serverInfo":{"name":"fixture","version":"1"}}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello"}]}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":2}}`,
	`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
	`{"jsonrpc":"2.0","id":"s1","method":"ping"}`,
	`{"jsonrpc":"2.0","id":7,"method":"roots/list","params":{}}`,
	`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params","data":{"x":[1,2]}}}`,
	// Edges of the SDK's decoder.
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","params":null}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	`{"jsonrpc":"2.0","id":1,"result":1,"result":null}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a"},"error":{"code":2}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a"},"error":null,"error":{"code":3}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a","data":null}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1e2,"message":"a"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-0,"message":null}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"Code":1,"message":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"error":5}`,
	`{"jsonrpc":"2.0","id":1e400,"result":1}`,
	`{"jsonrpc":"2.0","id":-1.7e3,"result":1}`,
	`{"jsonrpc":"2.0","id":1e-400,"result":1}`,
	`{"jsonrpc":null,"id":1,"result":1}`,
	`{"jsonrpc":"2.0","jsonrpc":null,"id":1,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"id":null,"result":1}`,
	`{"jsonrpc":"2.0","id":{},"id":"x","result":1}`,
	`{"JSONRPC":"2.0","id":1,"result":1}`,
	`{"json\u0072pc":"2\u002e0","id":"a\ud800b","m\u0065thod":"x\n"}`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"x\xff\"}",
	`{"jsonrpc":"2.0","id":1,"method":"a","params":[1, 2 ]}`,
	`{"jsonrpc":"2.0","id":1,"method":5,"method":"a"}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":5}`,
	`{"jsonrpc":"2.0","id":true,"method":"a"}`,
	// Whitespace and what may follow a message in one JSON text.
	`{"jsonrpc":"2.0","method":"a"}  `,
	`{"jsonrpc":"2.0","method":"a"}` + "\r\n",
	"\r\n\t " + `{"jsonrpc":"2.0","method":"a"}` + "\r  \t\n\n",
	`{"jsonrpc":"2.0","id":1,"result":1} x`,
	`{"jsonrpc":"2.0","id":1,"result":1}}`,
	`{"jsonrpc":"2.0","id":1,"result":1}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"result":1}` + "\v",
	// Malformed JSON.
	`{"jsonrpc":"2.0","id":1,"result":tru}`,
	`{"jsonrpc":"2.0","id":1,"result":[1,}`,
	`{"jsonrpc":"2.0","id":1,"result":01}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1,}}`,
	`{"jsonrpc":"2.0","id":1,"result":"\x01"}`,
	`{"jsonrpc":"2.0","id":1,"result":"\u12"}`,
	`{"jsonrpc":"2.0","id":1,"result":1.}`,
	`{"jsonrpc":"2.0","id":1,"result":-}`,
	`{"jsonrpc":"2.0","id":1,"result":1e+}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":9223372036854775808,"message":"a"}}`,
	`  {"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":"\u00e9\t"}`,
	`{"jsonrpc":"2.0","id":1,"result":"é"}`,
	// Not one message.
	`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
	`[]`,
	`"just a string"`,
	`null`,
	`12`,
	`{}`,
	"",
	"   \r",
	`not json`,
	`{"jsonrpc":"2.0",`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`,
}

// sdkDecode is the SDK's decision on data, and whether data is valid JSON
// (encoding/json's judgement, which Decode follows where the SDK's parser
// is more lenient).
func sdkDecode(data []byte) (jsonrpc.Message, error, bool) {
	m, err := jsonrpc.DecodeMessage(data)
	return m, err, json.Valid(data)
}

// checkDecode is the property FuzzEnvelope and TestEnvelopeSeeds check:
// Decode yields what jsonrpc.DecodeMessage yields for valid JSON — the
// same message, or a refusal where it refuses — refuses what is not valid
// JSON, and fails only with errors matching ErrMalformed whose text holds
// nothing of the data.
func checkDecode(t *testing.T, data []byte) {
	got, err := Decode(data)
	want, wantErr, valid := sdkDecode(data)
	if err != nil {
		require.Nil(t, got)
		require.ErrorIs(t, err, ErrMalformed)
		require.True(t, slicesContain(allErrors, err), "an error of the documented set: %v", err)
	}
	switch {
	case !valid:
		require.Error(t, err, "not valid JSON is refused")
	case wantErr != nil:
		require.Error(t, err, "the SDK refuses this text (%v)", wantErr)
	default:
		require.NoError(t, err, "the SDK decodes this text")
		requireSameMessage(t, want, got)
	}
}

var allErrors = []error{ErrTruncated, ErrSyntax, ErrTooDeep, ErrNotMessage, ErrTrailing}

func slicesContain(errs []error, err error) bool {
	for _, e := range errs {
		if err == e {
			return true
		}
	}
	return false
}

// FuzzEnvelope decodes a JSON text both ways: Decode must yield what the
// SDK's jsonrpc.DecodeMessage yields — the same message, or a refusal
// where it refuses — and refuse every text that is not valid JSON.
func FuzzEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	// What the stdio fixture server wrote in one session (initialize,
	// tools/list, calls, notifications, errors, a ping answer).
	traffic, err := os.ReadFile(filepath.Join("testdata", "traffic.ndjson"))
	require.NoError(f, err)
	for _, line := range bytes.Split(bytes.TrimSuffix(traffic, []byte("\n")), []byte("\n")) {
		f.Add(line)
	}
	f.Fuzz(checkDecode)
}

func TestEnvelopeSeeds(t *testing.T) {
	for _, s := range envelopeSeeds {
		name := s
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) { checkDecode(t, []byte(s)) })
	}
}

// TestDecodeErrors: each refusal names its cause, and the cause is the
// documented one for each kind of text.
func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		data string
		want error
	}{
		{"", ErrTruncated},
		{" \r\n", ErrTruncated},
		{`{"jsonrpc":"2.0","id":1,"result":[1,`, ErrTruncated},
		{`{"jsonrpc":"2.0","id":1,"result":"ab`, ErrTruncated},
		{`not json`, ErrSyntax},
		{`{"jsonrpc":"2.0","id":1,"result":[1,}`, ErrSyntax},
		{`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1000), ErrTooDeep},
		{`[{"jsonrpc":"2.0","id":1,"result":{}}]`, ErrNotMessage},
		{`null`, ErrNotMessage},
		{`{"jsonrpc":"1.0","id":1,"result":{}}`, ErrNotMessage},
		{`{"jsonrpc":"2.0","result":{}}`, ErrNotMessage},
		{`{"jsonrpc":"2.0","id":[],"result":{}}`, ErrNotMessage},
		{`{"jsonrpc":"2.0","id":1,"result":1} {"secret":"s3cr3t"}`, ErrTrailing},
	} {
		_, err := Decode([]byte(c.data))
		assert.ErrorIs(t, err, c.want, "%q", c.data)
		assert.ErrorIs(t, err, ErrMalformed)
		if err != nil {
			assert.NotContains(t, err.Error(), "s3cr3t", "an error holds nothing of the data")
		}
	}
	assert.False(t, errors.Is(ErrMalformed, ErrSyntax), "the umbrella is not a cause")
}

// TestDecodeDoesNotRetain: what Decode returns shares no byte with data.
func TestDecodeDoesNotRetain(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":"i","method":"m","params":{"p":1}}`)
	m, err := Decode(data)
	require.NoError(t, err)
	resp := []byte(`{"jsonrpc":"2.0","id":2,"result":{"r":1},"error":{"code":1,"message":"x","data":{"d":1}}}`)
	r, err := Decode(resp)
	require.NoError(t, err)
	for i := range data {
		data[i] = 'X'
	}
	for i := range resp {
		resp[i] = 'X'
	}
	req := m.(*jsonrpc.Request)
	assert.Equal(t, "m", req.Method)
	assert.Equal(t, "i", req.ID.Raw())
	assert.JSONEq(t, `{"p":1}`, string(req.Params))
	res := r.(*jsonrpc.Response)
	assert.JSONEq(t, `{"r":1}`, string(res.Result))
	assert.JSONEq(t, `{"d":1}`, string(res.Error.(*jsonrpc.Error).Data))
}

// benchLine is a tools/call result as the stdio fixture server writes it.
var benchLine = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"{\"records\":[{\"id\":1,\"kind\":\"a\"},{\"id\":2,\"kind\":\"b\"}]}"}],"structuredContent":{"records":[{"id":1,"kind":"a"},{"id":2,"kind":"b"}]}}}`)

// BenchmarkDecode decodes one message: sdk is jsonrpc.DecodeMessage,
// mcpward is Decode.
func BenchmarkDecode(b *testing.B) {
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(benchLine); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcpward", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(benchLine); err != nil {
				b.Fatal(err)
			}
		}
	})
}
