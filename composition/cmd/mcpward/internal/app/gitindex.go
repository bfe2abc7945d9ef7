package app

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpward/mcpward/composition/internal/gitrepo"
)

// maxGitConfigBytes bounds a git config file read.
const maxGitConfigBytes = 1 << 20

// Whether git tracks a file is read from the repository's index file
// (.git/index), never by running git: running git in a repository someone
// else prepared can run their code (core.fsmonitor, hooks of some
// commands), depends on PATH, and is a process on every mcpward command.
// The index format is documented (git's Documentation/gitformat-index.txt)
// and stable: versions 2, 3 and 4, SHA-1 or SHA-256 object names, split
// index ("link" extension: the shared index is read too) and sparse
// directory entries (a tracked directory outside the sparse cone).
//
// What cannot be read — no index, an unknown version, a truncated or
// corrupt file, a shared index that is missing — is an error: the caller
// then does not know, and fails closed.

// errIndex is the error of an index that cannot be read as documented.
var errIndex = errors.New("the git index cannot be read")

// maxIndexEntries and maxIndexPath bound a hostile index.
const (
	maxIndexEntries = 1 << 24
	maxIndexPath    = 1 << 16
)

// gitIndex is what mcpward learns from an index: every path it holds
// (directories of a sparse index end with "/"), and the shared index of a
// split index ("" when none).
type gitIndex struct {
	paths  map[string]bool
	shared string
}

// tracks reports whether the index holds rel (slash-separated, relative to
// the work tree) or a sparse directory entry above it.
func (ix *gitIndex) tracks(rel string) bool {
	if ix.paths[rel] {
		return true
	}
	for d := rel; ; {
		i := strings.LastIndexByte(d, '/')
		if i < 0 {
			return false
		}
		d = d[:i]
		if ix.paths[d+"/"] {
			return true
		}
	}
}

// parseIndex reads an index of size bytes from r, keeping the paths keep
// accepts (nil: every path). hashLen is the object name length: 20 (SHA-1)
// or 32 (SHA-256). The trailing checksum is verified.
func parseIndex(r io.Reader, size int64, hashLen int, keep func(string) bool) (*gitIndex, error) {
	var h hash.Hash
	switch hashLen {
	case 20:
		h = sha1.New()
	case 32:
		h = sha256.New()
	default:
		return nil, errIndex
	}
	if size < int64(12+hashLen) {
		return nil, errIndex
	}
	// The body (everything before the checksum) is read through the hash.
	body := &countingReader{r: bufio.NewReaderSize(io.TeeReader(io.LimitReader(r, size-int64(hashLen)), h), 64<<10), left: size - int64(hashLen)}
	var hdr [12]byte
	if _, err := io.ReadFull(body, hdr[:]); err != nil || string(hdr[:4]) != "DIRC" {
		return nil, errIndex
	}
	version := binary.BigEndian.Uint32(hdr[4:8])
	count := binary.BigEndian.Uint32(hdr[8:12])
	if version < 2 || version > 4 || count > maxIndexEntries {
		return nil, errIndex
	}
	ix := &gitIndex{paths: map[string]bool{}}
	fixed := make([]byte, 40+hashLen+2)
	var prev []byte
	for range count {
		if _, err := io.ReadFull(body, fixed); err != nil {
			return nil, errIndex
		}
		flags := binary.BigEndian.Uint16(fixed[40+hashLen:])
		entryLen := len(fixed)
		if flags&0x4000 != 0 {
			if version < 3 {
				return nil, errIndex
			}
			var ext [2]byte
			if _, err := io.ReadFull(body, ext[:]); err != nil {
				return nil, errIndex
			}
			entryLen += 2
		}
		var name []byte
		if version == 4 {
			strip, err := readVarint(body)
			if err != nil || strip > uint64(len(prev)) {
				return nil, errIndex
			}
			suffix, err := readCString(body)
			if err != nil {
				return nil, errIndex
			}
			name = append(append([]byte(nil), prev[:len(prev)-int(strip)]...), suffix...)
		} else {
			s, err := readCString(body)
			if err != nil {
				return nil, errIndex
			}
			name = s
			// Padding: 1 to 8 NULs in all (the terminator read above is
			// the first), so the entry is a multiple of 8 bytes.
			if pad := (8 - (entryLen+len(name)+1)%8) % 8; pad > 0 {
				if _, err := io.CopyN(io.Discard, body, int64(pad)); err != nil {
					return nil, errIndex
				}
			}
		}
		if len(name) > maxIndexPath {
			return nil, errIndex
		}
		prev = name
		// A split index's replacement entries have no name (it is the
		// shared index's).
		if len(name) > 0 && (keep == nil || keep(string(name))) {
			ix.paths[string(name)] = true
		}
	}
	// Extensions: 4-byte signature, 32-bit size, data; then the checksum.
	for body.left > 0 {
		var eh [8]byte
		if _, err := io.ReadFull(body, eh[:]); err != nil {
			return nil, errIndex
		}
		n := int64(binary.BigEndian.Uint32(eh[4:]))
		if n > body.left {
			return nil, errIndex
		}
		if string(eh[:4]) == "link" {
			if n < int64(hashLen) {
				return nil, errIndex
			}
			id := make([]byte, hashLen)
			if _, err := io.ReadFull(body, id); err != nil {
				return nil, errIndex
			}
			ix.shared = hex.EncodeToString(id)
			n -= int64(hashLen)
		}
		if _, err := io.CopyN(io.Discard, body, n); err != nil {
			return nil, errIndex
		}
	}
	sum := make([]byte, hashLen)
	if _, err := io.ReadFull(r, sum); err != nil || !bytes.Equal(sum, h.Sum(nil)) {
		return nil, errIndex
	}
	return ix, nil
}

// countingReader counts down the bytes left to read.
type countingReader struct {
	r    io.Reader
	left int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// readVarint reads git's offset varint (varint.c's decode_varint).
func readVarint(r io.Reader) (uint64, error) {
	var b [1]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	val := uint64(b[0] & 0x7f)
	for b[0]&0x80 != 0 {
		val++
		if val == 0 || val>>57 != 0 {
			return 0, errIndex
		}
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, err
		}
		val = val<<7 + uint64(b[0]&0x7f)
	}
	return val, nil
}

// readCString reads up to a NUL (not kept), at most maxIndexPath bytes.
func readCString(r io.Reader) ([]byte, error) {
	var out []byte
	var b [1]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, err
		}
		if b[0] == 0 {
			return out, nil
		}
		if len(out) >= maxIndexPath {
			return nil, errIndex
		}
		out = append(out, b[0])
	}
}

// maxIndexBytes is the largest index file read.
const maxIndexBytes = 1 << 30

// gitTracks reports whether the git repository of gitDir (its work tree at
// root) tracks each of paths (absolute, under root). It reads gitDir's
// index (and a split index's shared index) and the object format from the
// repository's config. An error means the answer is unknown.
func gitTracks(root, gitDir string, paths []string) (map[string]bool, error) {
	if gitDir == "" {
		return nil, errIndex
	}
	rels := map[string]string{}
	for _, p := range paths {
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		rels[filepath.ToSlash(rel)] = p
	}
	keep := func(name string) bool {
		if _, ok := rels[name]; ok {
			return true
		}
		return strings.HasSuffix(name, "/") // a sparse directory entry
	}
	hashLen := 20
	if objectFormat(gitrepo.ConfigPath(gitDir)) == "sha256" {
		hashLen = 32
	}
	read := func(path string) (*gitIndex, error) {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, errIndex
		}
		f, err := openNonBlocking(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		fi, err = f.Stat()
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIndexBytes {
			return nil, errIndex
		}
		return parseIndex(f, fi.Size(), hashLen, keep)
	}
	ix, err := read(filepath.Join(gitDir, "index"))
	if errors.Is(err, os.ErrNotExist) {
		// A repository with nothing added yet has no index: it tracks
		// nothing.
		ix, err = &gitIndex{paths: map[string]bool{}}, nil
	}
	if err != nil {
		return nil, errIndex
	}
	if ix.shared != "" && strings.Trim(ix.shared, "0") != "" {
		name := "sharedindex." + ix.shared
		sh, err := read(filepath.Join(gitDir, name))
		if err != nil {
			sh, err = read(filepath.Join(filepath.Dir(gitrepo.ConfigPath(gitDir)), name))
		}
		if err != nil {
			return nil, errIndex
		}
		// An entry the split index deletes stays counted: tracked is the
		// safe answer (the file is then not read as private).
		for p := range sh.paths {
			ix.paths[p] = true
		}
	}
	out := map[string]bool{}
	for rel, p := range rels {
		out[p] = ix.tracks(rel)
	}
	return out, nil
}

// objectFormat returns extensions.objectformat of a git config file,
// lower-cased ("" when unset or unreadable).
func objectFormat(configPath string) string {
	if configPath == "" {
		return ""
	}
	data, err := ReadRegular(configPath, maxGitConfigBytes)
	if err != nil {
		return ""
	}
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			in = strings.EqualFold(strings.TrimSpace(strings.Trim(line, "[]")), "extensions")
			continue
		}
		if !in {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "objectformat") {
			return strings.ToLower(strings.Trim(strings.TrimSpace(v), `"`))
		}
	}
	return ""
}
