package importcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
)

// ReasonTargetMalformed: the file import would write into is not a JSON
// object whose "mcpServers" is an object and whose "disabledMcpServers", if
// any, is an array of strings; it is left as it is. Class Config.
const ReasonTargetMalformed = "target_malformed"

// ReasonTargetUnreadable: the file import would write into exists but
// cannot be read. Class Config.
const ReasonTargetUnreadable = "target_unreadable"

// ReasonWriteFailed: the merged file could not be written; the old file is
// unchanged. Class Internal.
const ReasonWriteFailed = "write_failed"

// rawMember is one member of a JSON object, its value kept as it is.
type rawMember struct {
	key string
	val json.RawMessage
}

// readObject reads a JSON object's members in document order.
func readObject(data []byte) ([]rawMember, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []rawMember
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, ok := t.(string)
		if !ok {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, rawMember{key, v})
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return out, true
}

// writeObject encodes members as one compact JSON object.
func writeObject(buf *bytes.Buffer, members []rawMember) {
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := marshalNoEscape(m.key)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(m.val)
	}
	buf.WriteByte('}')
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// merged is what merging an import into a file did.
type merged struct {
	data []byte
	// added, replaced and skipped are server names, in the imported
	// order.
	added, replaced, skipped []string
}

// merge adds the servers of imported (our format, as hostconfig writes
// it) to the file existing (nil when there is none): every other key of
// the file and every existing server keep their place and their text; a
// name already defined is skipped unless force, when its entry is
// replaced in place; the names imported disabled are added to
// "disabledMcpServers"; the names in exclude are left out. The result has
// two-space indentation.
func merge(existing, imported []byte, disabled, exclude []string, force bool) (*merged, error) {
	bad := &refusal.Error{Class: refusal.Config, Reason: ReasonTargetMalformed}
	if existing == nil || len(bytes.TrimSpace(existing)) == 0 {
		existing = []byte("{}")
	}
	if doc := definition.Decode(definition.Source{Data: existing}); doc.Problem != nil {
		return nil, bad
	}
	root, ok := readObject(existing)
	if !ok {
		return nil, bad
	}
	srvIdx, disIdx := -1, -1
	for i, m := range root {
		switch m.key {
		case "mcpServers":
			srvIdx = i
		case "disabledMcpServers":
			disIdx = i
		}
	}
	var servers []rawMember
	if srvIdx >= 0 {
		if servers, ok = readObject(root[srvIdx].val); !ok {
			return nil, bad
		}
	}
	var overlay []string
	if disIdx >= 0 {
		if err := json.Unmarshal(root[disIdx].val, &overlay); err != nil {
			return nil, bad
		}
	}
	newRoot, _ := readObject(imported)
	var newServers []rawMember
	for _, m := range newRoot {
		if m.key == "mcpServers" {
			newServers, _ = readObject(m.val)
		}
	}

	res := &merged{}
	for _, n := range newServers {
		if slices.Contains(exclude, n.key) {
			continue
		}
		i := slices.IndexFunc(servers, func(m rawMember) bool { return m.key == n.key })
		switch {
		case i < 0:
			servers = append(servers, n)
			res.added = append(res.added, n.key)
		case force:
			servers[i].val = n.val
			res.replaced = append(res.replaced, n.key)
		default:
			res.skipped = append(res.skipped, n.key)
			continue
		}
		if slices.Contains(disabled, n.key) && !slices.Contains(overlay, n.key) {
			overlay = append(overlay, n.key)
		}
	}

	var sbuf bytes.Buffer
	writeObject(&sbuf, servers)
	srv := rawMember{"mcpServers", sbuf.Bytes()}
	if srvIdx >= 0 {
		root[srvIdx] = srv
	} else {
		root = append(root, srv)
	}
	if len(overlay) > 0 {
		ov, _ := marshalNoEscape(overlay)
		if disIdx >= 0 {
			root[disIdx].val = ov
		} else {
			root = append(root, rawMember{"disabledMcpServers", ov})
		}
	}
	var compact, out bytes.Buffer
	writeObject(&compact, root)
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, bad
	}
	out.WriteByte('\n')
	res.data = out.Bytes()
	return res, nil
}

// readTarget reads the file import writes into; nil, nil when there is
// none.
func readTarget(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonTargetUnreadable}
	}
	return data, nil
}

// writeAtomic replaces path with data: a temporary file in the same
// directory, synced, given the old file's mode bits (0600 for a new file),
// then renamed over path, so a reader sees the old file or the new one,
// never a part. Missing directories are created 0700.
func writeAtomic(path string, data []byte) error {
	fail := &refusal.Error{Class: refusal.Internal, Reason: ReasonWriteFailed}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".import-*")
	if err != nil {
		return fail
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fail
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail
	}
	if err := tmp.Sync(); err != nil {
		return fail
	}
	if err := tmp.Close(); err != nil {
		return fail
	}
	if err := os.Rename(name, path); err != nil {
		return fail
	}
	ok = true
	return nil
}
