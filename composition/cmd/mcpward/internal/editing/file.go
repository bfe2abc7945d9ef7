// Package editing is what add, add-json, remove and get share: the three
// files mcpward edits (one per scope), an order-preserving rewrite of
// them, atomic writes that keep a file's mode, the check that what is
// written decodes with the configuration decoder, and the refusal of
// literal credentials headed for the shared project file.
//
// It only ever writes mcpward's own local and user files and the
// project's .mcp.json (or the files the --local, --project and --user
// flags name); never another host's configuration.
package editing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// The refusal reasons of an edit. Each is Class Config.
const (
	// ReasonFileNotEditable: the scope's file is not a JSON object
	// mcpward can rewrite exactly (not JSON, not an object, a duplicate
	// key, mcpServers not an object, too large, not a regular file).
	ReasonFileNotEditable = "config_file_not_editable"
	// ReasonServerExists: add of a name the scope's file already holds.
	ReasonServerExists = "server_exists"
	// ReasonServerNotInScope: remove or get --scope of a name the scope's
	// file does not hold.
	ReasonServerNotInScope = "server_not_in_scope"
	// ReasonEntryInvalid: the entry would not decode, or would decode
	// refused; Detail names the problem word and field.
	ReasonEntryInvalid = "entry_invalid"
	// ReasonLiteralSecret: a literal credential headed for a file
	// without --allow-literal-secret (for the project file, that flag
	// writes it with a warning that a commit shares it).
	ReasonLiteralSecret = "literal_secret"
	// ReasonWriteFailed: the file could not be written; the original is
	// unchanged.
	ReasonWriteFailed = "config_write_failed"
	// ReasonForeignFile: the file is another host's own configuration
	// (~/.claude.json, Claude Desktop's, Cursor's, VS Code's, Gemini's,
	// Codex's), named with --local, --project or --user.
	ReasonForeignFile = "foreign_host_file"
	// ReasonFileChanged: the file changed between its reading and the
	// write (another edit ran at the same time); nothing was written.
	ReasonFileChanged = "config_file_changed"
)

// maxFileBytes is the largest file an edit reads (the CLI reads no larger
// configuration file either).
const maxFileBytes = 4 << 20

// keyServers is the root key of the servers, keyDisabled that of the
// disable overlay.
const (
	keyServers  = "mcpServers"
	keyDisabled = "disabledMcpServers"
)

// DetailUnreadable is the Detail of a ReasonFileNotEditable refusal of a
// file that exists but cannot be read.
const DetailUnreadable = "the file cannot be read"

// Scope is a file mcpward edits, in Claude Code's words.
type Scope string

// The scopes. Local is the default, as in Claude Code.
const (
	ScopeLocal   Scope = "local"
	ScopeProject Scope = "project"
	ScopeUser    Scope = "user"
)

// Scopes are every scope, in the order a refusal lists them.
var Scopes = []Scope{ScopeLocal, ScopeProject, ScopeUser}

// Tier is the configuration tier of s.
func (s Scope) Tier() ports.Tier {
	switch s {
	case ScopeProject:
		return ports.TierProject
	case ScopeUser:
		return ports.TierUser
	}
	return ports.TierLocal
}

// NewFileMode is the mode of a file an edit creates: 0644 for the shared
// project file, 0600 for the private local and user files.
func (s Scope) NewFileMode() fs.FileMode {
	if s == ScopeProject {
		return 0o644
	}
	return 0o600
}

// ScopeValue is the --scope flag.
type ScopeValue struct{ S *Scope }

// String implements pflag.Value.
func (v ScopeValue) String() string { return string(*v.S) }

// Type implements pflag.Value.
func (v ScopeValue) Type() string { return "scope" }

// Set implements pflag.Value: local, project or user.
func (v ScopeValue) Set(s string) error {
	for _, sc := range Scopes {
		if s == string(sc) {
			*v.S = sc
			return nil
		}
	}
	return errors.New("unknown scope (want local, project or user)")
}

// Path is the file of scope s: the --local, --project or --user flag's
// file when given, else the default location: the workspace's private
// file outside the working tree (app.DefaultLocalPath), the workspace's
// .mcp.json (app.DefaultProjectPath: the nearest one from the working
// directory up to the workspace root, else the root's), and
// $XDG_CONFIG_HOME/mcpward/mcp.json else $HOME/.config/mcpward/mcp.json.
// It fails only for the local and user scopes without their flag,
// XDG_CONFIG_HOME or HOME.
func Path(o app.Options, e app.Env, s Scope) (string, error) {
	var p app.Path
	var def func() string
	switch s {
	case ScopeProject:
		p, def = o.Project, func() string { return app.DefaultProjectPath(e) }
	case ScopeUser:
		p, def = o.User, func() string { return app.UserConfigPath(e) }
	default:
		p, def = o.Local, func() string { return app.DefaultLocalPath(e) }
	}
	path := ""
	if p.Set {
		path = p.Value
	} else {
		path = def()
	}
	if path == "" {
		return "", errors.New("no " + string(s) + " configuration file: set --" + string(s) + ", XDG_CONFIG_HOME or HOME")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.Cwd, path)
	}
	return filepath.Clean(path), nil
}

// File is one scope's file, read for an edit.
type File struct {
	Scope Scope
	// Path is the file's path (absolute).
	Path string
	// Exists is false when there is no file yet.
	Exists bool
	// Mode is the file's permission bits (the new file mode when absent).
	Mode fs.FileMode
	root *Node
	// orig is the content read (nil when there was no file).
	orig []byte
}

// Load reads the file of scope s at path for an edit. A missing file is
// an empty one. A file that cannot be rewritten exactly is refused with
// ReasonFileNotEditable: unreadable, larger than 4 MiB, not one JSON
// object, an object key twice, or "mcpServers" not an object.
func Load(s Scope, path string) (*File, error) {
	if host := ForeignHost(path); host != "" {
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonForeignFile, Origin: path, Detail: "this is " + host + "'s own configuration file; mcpward never writes it"}
	}
	f := &File{Scope: s, Path: path, Mode: s.NewFileMode(), root: Object()}
	notEditable := func(why string) error {
		return &refusal.Error{Class: refusal.Config, Reason: ReasonFileNotEditable, Origin: path, Detail: why}
	}
	// app.ReadRegular refuses a FIFO, socket or device (directly or
	// through a symbolic link) by name, without opening it.
	data, fi, err := app.ReadRegularStat(path, maxFileBytes)
	var nr *app.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case errors.As(err, &nr):
		return nil, notEditable("not a regular file (" + nr.Kind + ")")
	case errors.Is(err, app.ErrTooLarge):
		return nil, notEditable("larger than 4 MiB")
	case err != nil:
		return nil, notEditable(DetailUnreadable)
	}
	f.Exists, f.Mode, f.orig = true, fi.Mode().Perm(), data
	if strings.TrimSpace(string(data)) == "" {
		return f, nil
	}
	// The configuration decoder's own verdict first: what it cannot read
	// is not rewritten.
	doc := definition.Decode(definition.Source{Tier: s.Tier(), Origin: path, Data: data})
	if p := doc.Problem; p != nil && p.Kind != definition.ProblemMalformedOverlay {
		return nil, notEditable("the file is " + string(p.Kind) + "; correct it by hand first")
	}
	root, err := Parse(data)
	if errors.Is(err, errDuplicateKey) {
		return nil, notEditable("an object holds the same key twice; correct it by hand first")
	}
	if err != nil || !root.IsObject() {
		return nil, notEditable("the file is not a JSON object; correct it by hand first")
	}
	f.root = root
	return f, nil
}

// servers is the mcpServers object, nil when absent.
func (f *File) servers() *Node { return f.root.Get(keyServers) }

// Has reports whether the file defines name.
func (f *File) Has(name string) bool { return f.servers().Get(name) != nil }

// Entry is the JSON of name's entry, nil when absent.
func (f *File) Entry(name string) *Node { return f.servers().Get(name) }

// Put sets name's entry (appended after the others when new), creating
// mcpServers (after every other root key) when absent.
func (f *File) Put(name string, entry *Node) {
	s := f.servers()
	if s == nil {
		s = Object()
		f.root.Set(keyServers, s)
	}
	s.Set(name, entry)
}

// Delete removes name's entry and reports whether it was there. Every
// other key stays, disabledMcpServers included.
func (f *File) Delete(name string) bool {
	s := f.servers()
	return s != nil && s.Delete(name)
}

// Disabled returns the names of the "disabledMcpServers" overlay (nil
// when absent); ok is false when it is present but not an array of
// strings.
func (f *File) Disabled() (names []string, ok bool) {
	n := f.root.Get(keyDisabled)
	if n == nil {
		return nil, true
	}
	if n.kind != kindArray {
		return nil, false
	}
	for _, it := range n.items {
		var name string
		if it.kind != kindScalar || !strings.HasPrefix(it.raw, `"`) || json.Unmarshal([]byte(it.raw), &name) != nil {
			return nil, false
		}
		names = append(names, name)
	}
	return names, true
}

// SetDisabled sets the "disabledMcpServers" overlay to names: in place
// when present, after every other root key when absent.
func (f *File) SetDisabled(names []string) { f.root.Set(keyDisabled, Strings(names)) }

// Bytes is the file as it would be written.
func (f *File) Bytes() []byte { return f.root.Marshal() }

// Decode decodes the file as it would be written, with the configuration
// decoder, and returns name's entry (ok false when absent).
func (f *File) Decode(name string) (definition.Entry, bool) {
	doc := definition.Decode(definition.Source{Tier: f.Scope.Tier(), Origin: f.Path, Data: f.Bytes()})
	for _, e := range doc.Entries {
		if e.Name == name {
			return e, true
		}
	}
	return definition.Entry{}, false
}

// Validate refuses, with ReasonEntryInvalid, an entry for name that the
// configuration decoder would not accept as a usable definition: a
// malformed entry, or one refused by name (sse, ws, a client secret, a
// header helper as a shell string). It returns the decoded definition.
func (f *File) Validate(name string) (*definition.Definition, error) {
	e, ok := f.Decode(name)
	switch {
	case !ok:
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonEntryInvalid, Server: name, Detail: "the entry does not decode"}
	case e.Def == nil:
		detail := e.Problem
		if e.Field != "" {
			detail += ", field " + e.Field
		}
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonEntryInvalid, Server: name, Detail: detail}
	case e.Def.Refusal != "":
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonEntryInvalid, Server: name, Detail: e.Def.Refusal}
	}
	return e.Def, nil
}

// Save writes the file atomically (see WriteAtomic) with its mode. A
// failure is ReasonWriteFailed; the file is then as it was. When the file
// is no longer what Load read (another edit wrote it meanwhile), nothing
// is written: ReasonFileChanged. (That check and the rename are two
// steps, so two edits at the very same instant can still lose one; the
// CLI takes no lock on files other hosts may also write.)
func (f *File) Save() error {
	now, err := app.ReadRegular(f.Path, maxFileBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !f.Exists:
	case err == nil && f.Exists && bytes.Equal(now, f.orig):
	default:
		return &refusal.Error{Class: refusal.Config, Reason: ReasonFileChanged, Origin: f.Path, Detail: "the file changed while it was being edited; nothing was written"}
	}
	dir := filepath.Dir(f.Path)
	perm := fs.FileMode(0o700)
	if f.Scope == ScopeProject {
		perm = 0o755
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return &refusal.Error{Class: refusal.Config, Reason: ReasonWriteFailed, Origin: f.Path, Detail: "the directory cannot be created"}
	}
	if err := WriteAtomic(f.Path, f.Bytes(), f.Mode); err != nil {
		return &refusal.Error{Class: refusal.Config, Reason: ReasonWriteFailed, Origin: f.Path, Detail: err.Error()}
	}
	return nil
}

// beforeRename, when set (tests), runs after the temporary file is
// written and synced and before it replaces the file; an error aborts the
// write.
var beforeRename func(tmp string) error

// WriteAtomic replaces the file at path with data: it writes a temporary
// file in the same directory, sets mode on it, syncs it, renames it over
// path and syncs the directory. A reader sees the old file or the new
// one, never a mix; on any failure the old file is untouched and the
// temporary file removed. When path is a symbolic link, the file it
// points to is replaced (the link stays). Its error text holds no data.
func WriteAtomic(path string, data []byte, mode fs.FileMode) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return errors.New("a temporary file cannot be created beside it")
	}
	name := tmp.Name()
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return errors.New("the temporary file cannot be written")
	}
	if err := tmp.Chmod(mode); err != nil {
		return errors.New("the temporary file's mode cannot be set")
	}
	if err := tmp.Sync(); err != nil {
		return errors.New("the temporary file cannot be synced")
	}
	if err := tmp.Close(); err != nil {
		return errors.New("the temporary file cannot be closed")
	}
	if beforeRename != nil {
		if err := beforeRename(name); err != nil {
			return fmt.Errorf("aborted before the rename: %w", err)
		}
	}
	if err := os.Rename(name, path); err != nil {
		return errors.New("the temporary file cannot replace it")
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// Locate returns the scopes (of Scopes, in order) whose file defines
// name, with each file's path; a file that cannot be read is skipped.
func Locate(o app.Options, e app.Env, name string) map[Scope]string {
	out := map[Scope]string{}
	for _, s := range Scopes {
		p, err := Path(o, e, s)
		if err != nil {
			continue
		}
		if f, err := Load(s, p); err == nil && f.Has(name) {
			out[s] = p
		}
	}
	return out
}

// ForeignHost names the host whose own configuration file path is, ""
// when it is none known: ~/.claude.json (Claude Code),
// claude_desktop_config.json (Claude Desktop), .cursor/mcp.json (Cursor),
// .vscode/mcp.json (VS Code), .gemini/settings.json (Gemini CLI) and
// .codex/config.toml (Codex). The project's .mcp.json is not foreign: it
// is the shared project file mcpward edits. A symbolic link is judged by
// the file it points to as well.
func ForeignHost(path string) string {
	if host := foreignHost(path); host != "" {
		return host
	}
	if target, err := filepath.EvalSymlinks(path); err == nil {
		return foreignHost(target)
	}
	return ""
}

func foreignHost(path string) string {
	base, dir := filepath.Base(path), filepath.Base(filepath.Dir(path))
	switch {
	case base == ".claude.json":
		return "Claude Code"
	case base == "claude_desktop_config.json":
		return "Claude Desktop"
	case dir == ".cursor" && base == "mcp.json":
		return "Cursor"
	case dir == ".vscode" && base == "mcp.json":
		return "VS Code"
	case dir == ".gemini" && base == "settings.json":
		return "Gemini CLI"
	case dir == ".codex" && base == "config.toml":
		return "Codex"
	}
	return ""
}
