package jsonrpcwire

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustID(t testing.TB, v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	require.NoError(t, err)
	return id
}

// TestAppend: the bytes appended are jsonrpc.EncodeMessage's, after
// whatever dst held.
func TestAppend(t *testing.T) {
	msgs := []jsonrpc.Message{
		&jsonrpc.Request{ID: mustID(t, float64(1)), Method: "initialize", Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{}}`)},
		&jsonrpc.Request{Method: "notifications/initialized"},
		&jsonrpc.Request{ID: mustID(t, "s<&>\u2028\xff\"\\\n\x01"), Method: "tools/call", Params: json.RawMessage(" { \"a\" : [ 1 , \"<x>\" ] } ")},
		&jsonrpc.Request{ID: mustID(t, float64(-9007199254740993)), Method: "m\u00e9<>&\u2029"},
		&jsonrpc.Request{},
		&jsonrpc.Response{ID: mustID(t, float64(7)), Result: json.RawMessage(`{"roots":[]}`)},
		&jsonrpc.Response{ID: mustID(t, "x"), Error: &jsonrpc.Error{Code: -32601, Message: "method <not> found", Data: json.RawMessage(` {"k" : 1}`)}},
		&jsonrpc.Response{ID: mustID(t, float64(8)), Error: errors.New("plain")},
		&jsonrpc.Response{ID: mustID(t, float64(9)), Error: errors.Join(errors.New("outer"), &jsonrpc.Error{Code: -32602, Message: "inner"})},
		&jsonrpc.Response{ID: mustID(t, float64(10))},
	}
	for _, m := range msgs {
		want, err := jsonrpc.EncodeMessage(m)
		require.NoError(t, err)
		got, err := Append(nil, m)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
		prefix := []byte("data: ")
		got, err = Append(prefix, m)
		require.NoError(t, err)
		assert.Equal(t, "data: "+string(want), string(got), "appended after what dst holds")
	}
}

// TestAppendRefuses: invalid raw JSON and unknown message types are
// refused, as EncodeMessage refuses them, and dst comes back unchanged.
func TestAppendRefuses(t *testing.T) {
	for _, m := range []jsonrpc.Message{
		&jsonrpc.Request{Method: "x", Params: json.RawMessage(`{`)},
		&jsonrpc.Response{ID: mustID(t, "x"), Result: json.RawMessage(`[1,]`)},
		&jsonrpc.Response{ID: mustID(t, "x"), Error: &jsonrpc.Error{Data: json.RawMessage(`nul`)}},
	} {
		_, wantErr := jsonrpc.EncodeMessage(m)
		require.Error(t, wantErr)
		dst := make([]byte, 3, 64)
		copy(dst, "abc")
		got, err := Append(dst, m)
		require.Error(t, err, "%#v", m)
		assert.Equal(t, "abc", string(got))
	}
	// No message at all (the SDK's encoder panics on it).
	got, err := Append([]byte("abc"), nil)
	require.Error(t, err)
	assert.Equal(t, "abc", string(got))
}

// roundTrip checks one message: Append writes EncodeMessage's bytes (or
// both refuse), and Decode reads them back as DecodeMessage does.
func roundTrip(t *testing.T, m jsonrpc.Message) {
	want, wantErr := jsonrpc.EncodeMessage(m)
	got, err := Append(nil, m)
	if wantErr != nil {
		require.Error(t, err)
		return
	}
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
	back, err := Decode(got)
	sdkBack, sdkErr := jsonrpc.DecodeMessage(want)
	if sdkErr != nil {
		require.Error(t, err, "the SDK does not read back its own encoding: %v", sdkErr)
		return
	}
	require.NoError(t, err)
	requireSameMessage(t, sdkBack, back)
}

// FuzzAppend: any method, id (string or number), code, message and raw
// JSON encode to the SDK's bytes, or both refuse; and what is encoded
// decodes, by Decode, to what the SDK decodes it to.
func FuzzAppend(f *testing.F) {
	f.Add("tools/call", "id-1", int64(3), false, []byte(`{"name":"echo","arguments":{"text":"<hi>"}}`))
	f.Add("\u2028<&>\xff", "\x00", int64(-32601), true, []byte(` [1, 2 ,{"a":null}] `))
	f.Add("", "", int64(0), true, []byte(`{`))
	f.Add("m", "x", int64(-1<<63), false, []byte(` "s\u00e9\\n" `))
	f.Fuzz(func(t *testing.T, method, sid string, nid int64, numeric bool, raw []byte) {
		id := mustID(t, sid)
		if numeric {
			id = mustID(t, float64(nid))
		}
		for _, m := range []jsonrpc.Message{
			&jsonrpc.Request{ID: id, Method: method, Params: raw},
			&jsonrpc.Request{Method: method, Params: raw},
			&jsonrpc.Response{ID: id, Result: raw},
			&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: nid, Message: method, Data: raw}},
			&jsonrpc.Response{ID: id, Error: errors.Join(errors.New(method), &jsonrpc.Error{Code: nid})},
		} {
			roundTrip(t, m)
		}
	})
}

// BenchmarkAppend encodes one tools/call request: sdk is
// jsonrpc.EncodeMessage, mcpward is Append into a reused buffer.
func BenchmarkAppend(b *testing.B) {
	m := &jsonrpc.Request{ID: mustID(b, float64(42)), Method: "tools/call",
		Params: json.RawMessage(`{"name":"echo","arguments":{"text":"hello"},"_meta":{"progressToken":7}}`)}
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.EncodeMessage(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcpward", func(b *testing.B) {
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if buf, err = Append(buf[:0], m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
