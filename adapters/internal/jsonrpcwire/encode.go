package jsonrpcwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpward/mcpward/core/jsontext"
)

// Append appends msg's encoding to dst and returns the extended slice: the
// bytes jsonrpc.EncodeMessage produces for it (keys in the same order,
// empty fields omitted, raw params, results and error data compacted and
// checked, strings escaped as encoding/json does without HTML escaping),
// with no trailing newline. A response's error that is not a
// *jsonrpc.Error is written as EncodeMessage writes it: its text, and the
// code of the first *jsonrpc.Error in its chain.
//
// It fails where EncodeMessage fails: raw params, result or error data
// that is not valid JSON (the error is encoding/json's), or a message
// that is neither a *jsonrpc.Request nor a *jsonrpc.Response; then it
// returns dst unchanged (its spare capacity may have been written).
// Safe for concurrent use on distinct dst.
func Append(dst []byte, msg jsonrpc.Message) ([]byte, error) {
	b := bytes.NewBuffer(dst)
	if err := encode(b, msg); err != nil {
		return dst, err
	}
	return b.Bytes(), nil
}

// encode writes msg to b.
func encode(b *bytes.Buffer, msg jsonrpc.Message) error {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		b.WriteString(`{"jsonrpc":"2.0"`)
		encodeID(b, m.ID)
		if m.Method != "" {
			b.WriteString(`,"method":`)
			b.Write(jsontext.AppendStringNoHTML(b.AvailableBuffer(), m.Method))
		}
		if len(m.Params) > 0 {
			b.WriteString(`,"params":`)
			if err := json.Compact(b, m.Params); err != nil {
				return err
			}
		}
	case *jsonrpc.Response:
		b.WriteString(`{"jsonrpc":"2.0"`)
		encodeID(b, m.ID)
		if len(m.Result) > 0 {
			b.WriteString(`,"result":`)
			if err := json.Compact(b, m.Result); err != nil {
				return err
			}
		}
		if m.Error != nil {
			e, ok := m.Error.(*jsonrpc.Error)
			if !ok {
				e = &jsonrpc.Error{Message: m.Error.Error()}
				var wrapped *jsonrpc.Error
				if errors.As(m.Error, &wrapped) {
					e.Code = wrapped.Code
				}
			}
			b.WriteString(`,"error":{"code":`)
			b.Write(strconv.AppendInt(b.AvailableBuffer(), e.Code, 10))
			b.WriteString(`,"message":`)
			b.Write(jsontext.AppendStringNoHTML(b.AvailableBuffer(), e.Message))
			if len(e.Data) > 0 {
				b.WriteString(`,"data":`)
				if err := json.Compact(b, e.Data); err != nil {
					return err
				}
			}
			b.WriteByte('}')
		}
	default:
		return fmt.Errorf("jsonrpcwire: unknown message type %T", msg)
	}
	b.WriteByte('}')
	return nil
}

// encodeID writes an id member, none for an invalid (absent) id.
func encodeID(b *bytes.Buffer, id jsonrpc.ID) {
	switch v := id.Raw().(type) {
	case int64:
		b.WriteString(`,"id":`)
		b.Write(strconv.AppendInt(b.AvailableBuffer(), v, 10))
	case string:
		b.WriteString(`,"id":`)
		b.Write(jsontext.AppendStringNoHTML(b.AvailableBuffer(), v))
	}
}
