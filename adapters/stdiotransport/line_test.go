package stdiotransport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/internal/jsonrpcwire"
	"github.com/mcpward/mcpward/adapters/internal/jsonrpcwire/wiretest"
)

// sdkLine is what the go-sdk's stdio connection makes of one line: its
// stream decoder reads one JSON value, refuses trailing data other than a
// line ending, and jsonrpc.DecodeMessage decodes the value. skip reports a
// line whose handling deliberately differs (a batch, a second value after
// a '\r'), blank a line of whitespace.
func sdkLine(line []byte) (m jsonrpc.Message, err error, blank, skip bool) {
	dec := json.NewDecoder(bytes.NewReader(append(bytes.Clone(line), '\n')))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, true, false
		}
		return nil, err, false, false
	}
	rest := append(bytes.Clone(line[dec.InputOffset():]), '\n')
	if rest[0] != '\n' && rest[0] != '\r' {
		return nil, errors.New("trailing data"), false, false
	}
	if len(bytes.Trim(rest, " \t\r\n")) > 0 {
		// The SDK delivers the message and then reads on: a second
		// value, or a failure, on the same line.
		return nil, nil, false, true
	}
	if raw[0] == '[' {
		return nil, nil, false, true // a batch
	}
	m, err = jsonrpc.DecodeMessage(raw)
	return m, err, false, false
}

// requireSameMessage fails the test unless got is the message want is
// (wiretest.Diff).
func requireSameMessage(t *testing.T, want, got jsonrpc.Message) {
	t.Helper()
	if d := wiretest.Diff(want, got); d != "" {
		t.Fatal(d)
	}
}

// lineSeeds are lines whose handling is the stdio framing's own (blank
// lines, what may follow a message on its line, batches, a second value)
// and a few messages; jsonrpcwire's FuzzEnvelope covers the envelope.
var lineSeeds = []string{
	`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello"}]}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":2}}`,
	`{"jsonrpc":"2.0","id":"s1","method":"ping"}`,
	`{"jsonrpc":"2.0","method":"a"}  `,
	`{"jsonrpc":"2.0","method":"a"}` + "\r",
	`{"jsonrpc":"2.0","method":"a"}` + "\r  \t",
	`{"jsonrpc":"2.0","method":"a"}` + " \r",
	`{"jsonrpc":"2.0","method":"a"}` + "\r\v",
	`{"jsonrpc":"2.0","id":1,"result":1} x`,
	`{"jsonrpc":"2.0","id":1,"result":1}}`,
	`{"jsonrpc":"2.0","id":1,"result":1}` + "\r" + `{"jsonrpc":"2.0","id":2,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"result":1}{"jsonrpc":"2.0","id":2,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"result":tru}`,
	`{"jsonrpc":"2.0","id":1,"result":[1,`,
	`  {"jsonrpc":"2.0","id":1,"result":{}}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
	`[]`,
	`"just a string"`,
	`null`,
	`{}`,
	"",
	"   \r",
	"\t",
	`not json`,
}

// FuzzDecodeLine decodes a line both ways: decodeLine must yield what the
// SDK's connection yields — the same message, or a refusal where it
// refuses — except for the lines it deliberately refuses (batches, two
// values on one line).
func FuzzDecodeLine(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return // a line never holds a newline
		}
		checkLine(t, line)
	})
}

// checkLine is FuzzDecodeLine's property for one line.
func checkLine(t *testing.T, line []byte) {
	got, gotErr := decodeLine(line)
	want, wantErr, blank, skip := sdkLine(line)
	if gotErr != nil {
		require.ErrorIs(t, gotErr, jsonrpcwire.ErrMalformed)
	}
	switch {
	case skip:
		require.Error(t, gotErr, "a batch or a second value is refused")
	case blank:
		require.NoError(t, gotErr)
		require.Nil(t, got)
	case wantErr != nil:
		require.Error(t, gotErr, "the SDK refuses this line (%v)", wantErr)
	default:
		require.NoError(t, gotErr, "the SDK decodes this line")
		requireSameMessage(t, want, got)
	}
}

func TestDecodeLineSeeds(t *testing.T) {
	for _, s := range lineSeeds {
		t.Run(s, func(t *testing.T) { checkLine(t, []byte(s)) })
	}
}

// benchLine is a tools/call result as the fixture server writes it.
var benchLine = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"{\"records\":[{\"id\":1,\"kind\":\"a\"},{\"id\":2,\"kind\":\"b\"}]}"}],"structuredContent":{"records":[{"id":1,"kind":"a"},{"id":2,"kind":"b"}]}}}`)

// BenchmarkDecodeLine decodes one inbound line: sdk is what the SDK's
// connection does with it (a batch attempt, then jsonrpc.DecodeMessage),
// mcpward is decodeLine (jsonrpcwire.Decode under the line's rules).
func BenchmarkDecodeLine(b *testing.B) {
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var batch []json.RawMessage
			if json.Unmarshal(benchLine, &batch) == nil {
				b.Fatal("not a batch")
			}
			if _, err := jsonrpc.DecodeMessage(benchLine); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcpward", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeLine(benchLine); err != nil {
				b.Fatal(err)
			}
		}
	})
}
