package stdiotransport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/internal/jsonrpcwire"
	"github.com/mcpward/mcpward/core/refusal"
)

// frameAll reads every message of data, delivered in the given chunk
// sizes, and the error that ended the stream.
func frameAll(t *testing.T, r io.Reader) ([]jsonrpc.Message, error) {
	t.Helper()
	f := &framer{r: r}
	defer f.release()
	var msgs []jsonrpc.Message
	for range 1000 {
		m, err := f.next()
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
	}
	t.Fatal("the framer did not end")
	return nil, nil
}

func methods(msgs []jsonrpc.Message) []string {
	var out []string
	for _, m := range msgs {
		switch m := m.(type) {
		case *jsonrpc.Request:
			out = append(out, m.Method)
		case *jsonrpc.Response:
			out = append(out, "response")
		}
	}
	return out
}

func TestFramer(t *testing.T) {
	const (
		a = `{"jsonrpc":"2.0","method":"a"}`
		b = `{"jsonrpc":"2.0","method":"b","params":{"x":"` + "\u00e9" + `"}}`
		r = `{"jsonrpc":"2.0","id":1,"result":{}}`
	)
	big := `{"jsonrpc":"2.0","method":"big","params":{"s":"` + strings.Repeat("x", 3*readBufSize) + `"}}`
	cases := []struct {
		name    string
		data    string
		want    []string
		wantErr error // nil: io.EOF
		syntax  bool  // the error is a decode failure
	}{
		{name: "lines", data: a + "\n" + b + "\n" + r + "\n", want: []string{"a", "b", "response"}},
		{name: "crlf and blank lines", data: "\n \r\n" + a + "\r\n\n\t\n" + b + "\n", want: []string{"a", "b"}},
		{name: "last line without newline", data: a + "\n" + b, want: []string{"a", "b"}},
		{name: "end inside a message", data: a + "\n" + `{"jsonrpc":"2.0",`, want: []string{"a"}, wantErr: io.ErrUnexpectedEOF},
		{name: "a line longer than the pooled buffer", data: a + "\n" + big + "\n" + b + "\n", want: []string{"a", "big", "b"}},
		{name: "not json", data: a + "\nnot json\n" + b + "\n", want: []string{"a"}, syntax: true},
		{name: "a message over two lines", data: `{"jsonrpc":"2.0",` + "\n" + `"method":"a"}` + "\n", syntax: true},
		{name: "a batch", data: "[" + a + "]\n", syntax: true},
		{name: "trailing data", data: a + " {}\n", syntax: true},
		{name: "two messages after a carriage return", data: a + "\r" + b + "\n", syntax: true},
	}
	for _, tc := range cases {
		for _, chunk := range []int{0, 1, 7} {
			t.Run(tc.name, func(t *testing.T) {
				var src io.Reader = strings.NewReader(tc.data)
				if chunk > 0 {
					src = &chunkReader{data: []byte(tc.data), chunks: []int{chunk}}
				}
				msgs, err := frameAll(t, src)
				assert.Equal(t, tc.want, methods(msgs))
				switch {
				case tc.syntax:
					assert.True(t, isDecodeFailure(err), "a decode failure: %v", err)
				case tc.wantErr != nil:
					assert.ErrorIs(t, err, tc.wantErr)
				default:
					assert.ErrorIs(t, err, io.EOF)
				}
			})
		}
	}
}

// TestFramerFailsFast: a line whose first byte is not '{' is refused at
// once, without waiting for its end (a server may never end it).
func TestFramerFailsFast(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	go func() { _, _ = pw.Write([]byte("garbage without an end")) }()
	f := &framer{r: pr}
	defer f.release()
	_, err := f.next()
	assert.True(t, isDecodeFailure(err))
}

// TestFramerReaderError: the complete lines before the reader's error are
// delivered, then the error itself (the receive cap's refusal).
func TestFramerReaderError(t *testing.T) {
	data := `{"jsonrpc":"2.0","method":"a"}` + "\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n" + strings.Repeat("x", 100)
	msgs, err := frameAll(t, &lineCapReader{r: strings.NewReader(data), limit: 40})
	assert.Equal(t, []string{"a", "b"}, methods(msgs))
	assert.Equal(t, "receive_cap_exceeded", refusal.ReasonOf(err))

	msgs, err = frameAll(t, iotest.DataErrReader(iotest.ErrReader(io.ErrClosedPipe)))
	assert.Empty(t, msgs)
	assert.ErrorIs(t, err, io.ErrClosedPipe)
}

func mustID(t testing.TB, v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	require.NoError(t, err)
	return id
}

// TestFrameConnWrite: Write writes each message as jsonrpc.EncodeMessage
// encodes it (jsonrpcwire.Append), one line each, reusing its buffer, and
// refuses what EncodeMessage refuses without writing.
func TestFrameConnWrite(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close() // ends the reading goroutine
	w := &countCloser{}
	c := newFrameConn(pr, w)
	defer c.Close()
	msgs := []jsonrpc.Message{
		&jsonrpc.Request{ID: mustID(t, float64(1)), Method: "initialize", Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{}}`)},
		&jsonrpc.Request{Method: "notifications/initialized"},
		&jsonrpc.Request{ID: mustID(t, "s<&>\u2028\xff\"\\\n\x01"), Method: "tools/call", Params: json.RawMessage(" { \"a\" : [ 1 , \"<x>\" ] } ")},
		&jsonrpc.Response{ID: mustID(t, "x"), Error: &jsonrpc.Error{Code: -32601, Message: "method <not> found", Data: json.RawMessage(` {"k" : 1}`)}},
		&jsonrpc.Response{ID: mustID(t, float64(7)), Result: json.RawMessage(`{"big":"` + strings.Repeat("x", writeBufKeep) + `"}`)},
		&jsonrpc.Response{ID: mustID(t, float64(8)), Error: errors.New("plain")},
	}
	var want strings.Builder
	for _, m := range msgs {
		b, err := jsonrpc.EncodeMessage(m)
		require.NoError(t, err)
		want.Write(append(b, '\n'))
		require.NoError(t, c.Write(context.Background(), m))
	}
	assert.Equal(t, want.String(), w.String())
	assert.LessOrEqual(t, cap(c.wbuf), writeBufKeep, "a buffer grown past writeBufKeep is not kept")

	n := w.Len()
	bad := &jsonrpc.Request{Method: "x", Params: json.RawMessage(`{`)}
	_, err := jsonrpc.EncodeMessage(bad)
	require.Error(t, err)
	assert.Error(t, c.Write(context.Background(), bad), "invalid raw params are refused, as the SDK refuses them")
	assert.Equal(t, n, w.Len(), "nothing is written for a refused message")
}

// TestFrameConnClose: Close unblocks a Read waiting for input and closes
// the writer once.
func TestFrameConnClose(t *testing.T) {
	pr, pw := io.Pipe()
	w := &countCloser{}
	c := newFrameConn(pr, w)
	done := make(chan error)
	go func() {
		_, err := c.Read(context.Background())
		done <- err
	}()
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	assert.ErrorIs(t, <-done, io.EOF)
	assert.Equal(t, 1, w.closes)
	pw.Close() // ends the reading goroutine
}

type countCloser struct {
	bytes.Buffer
	closes int
}

func (c *countCloser) Close() error { c.closes++; return nil }

// FuzzFramer: whatever the chunking, the framer delivers what decodeLine
// makes of each line, in order, up to the first line it refuses, and never
// panics or loops.
func FuzzFramer(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"a"}`+"\n\n"+`{"jsonrpc":"2.0","id":1,"result":{}}`+"\r\n"), uint8(3))
	f.Add([]byte("x\n"), uint8(1))
	f.Add([]byte(`{"jsonrpc":"2.0",`), uint8(0))
	// Lines across the idle buffer's bound (idleBufSize).
	f.Add([]byte(msgLine("a", 460)+msgLine("b", 1)+msgLine("c", 470)+msgLine("d", 1200)+" \n"+msgLine("e", 3)), uint8(200))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		msgs, err := frameAll(t, &chunkReader{data: data, chunks: []int{int(chunk), 1, int(chunk) / 2}})
		var want []jsonrpc.Message
		lines := bytes.Split(data, []byte("\n"))
		for i, line := range lines {
			m, lerr := decodeLine(line)
			if lerr != nil {
				if i == len(lines)-1 && errors.Is(lerr, jsonrpcwire.ErrTruncated) {
					assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
				} else {
					assert.True(t, isDecodeFailure(err), "a refused line ends the stream: %v", err)
				}
				break
			}
			if m != nil {
				want = append(want, m)
			}
			if i == len(lines)-1 {
				assert.ErrorIs(t, err, io.EOF)
			}
		}
		require.Len(t, msgs, len(want))
		for i := range want {
			requireSameMessage(t, want[i], msgs[i])
		}
	})
}
