package importcmd

import (
	"errors"
	"slices"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/editing"
	"github.com/mcpward/mcpward/core/refusal"
)

// ReasonTargetMalformed: the file import would write into is not a JSON
// object whose "mcpServers" is an object and whose "disabledMcpServers", if
// any, is an array of strings (or it cannot be rewritten exactly: see
// editing.Load); it is left as it is. Class Config.
const ReasonTargetMalformed = "target_malformed"

// ReasonTargetUnreadable: the file import would write into exists but
// cannot be read. Class Config.
const ReasonTargetUnreadable = "target_unreadable"

// ReasonWriteFailed: the merged file could not be written; the old file is
// unchanged. Class Internal.
const ReasonWriteFailed = "write_failed"

// merged is what merging an import into a file did.
type merged struct {
	// added, replaced and skipped are server names, in the imported
	// order.
	added, replaced, skipped []string
}

// loadTarget reads the file import writes into with the editing package
// (the same reading "add" and "remove" do: a missing file is empty, another
// host's own file is refused with editing.ReasonForeignFile), its
// refusals in import's words: ReasonTargetUnreadable, ReasonTargetMalformed.
func loadTarget(scope, path string) (*editing.File, error) {
	f, err := editing.Load(editing.Scope(scope), path)
	var r *refusal.Error
	if errors.As(err, &r) && r.Reason == editing.ReasonFileNotEditable {
		reason := ReasonTargetMalformed
		if r.Detail == editing.DetailUnreadable {
			reason = ReasonTargetUnreadable
		}
		return nil, &refusal.Error{Class: refusal.Config, Reason: reason, Origin: r.Origin, Detail: r.Detail}
	}
	return f, err
}

// saveTarget writes f (editing.File.Save: atomic, mode bits kept, nothing
// written when the file changed meanwhile), a failure to write in
// import's words (ReasonWriteFailed).
func saveTarget(f *editing.File) error {
	err := f.Save()
	var r *refusal.Error
	if errors.As(err, &r) && r.Reason == editing.ReasonWriteFailed {
		return &refusal.Error{Class: refusal.Internal, Reason: ReasonWriteFailed, Origin: r.Origin, Detail: r.Detail}
	}
	return err
}

// merge adds the servers of imported (our format, as hostconfig writes
// it) to f: every other key of the file and every existing server keep
// their place; a name already defined is skipped unless force, when its
// entry is replaced in place; the names imported disabled are added to
// "disabledMcpServers"; the names in exclude are left out. f.Bytes() is
// then the file to write (two-space indentation).
func merge(f *editing.File, imported []byte, disabled, exclude []string, force bool) (*merged, error) {
	overlay, ok := f.Disabled()
	if !ok {
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonTargetMalformed, Origin: f.Path, Detail: "disabledMcpServers is not an array of strings"}
	}
	root, err := editing.Parse(imported)
	if err != nil {
		return nil, &refusal.Error{Class: refusal.Internal, Reason: "import_encode_failed"}
	}
	servers := root.Get("mcpServers")
	res := &merged{}
	grew := false
	for _, name := range servers.Keys() {
		if slices.Contains(exclude, name) {
			continue
		}
		switch {
		case !f.Has(name):
			res.added = append(res.added, name)
		case force:
			res.replaced = append(res.replaced, name)
		default:
			res.skipped = append(res.skipped, name)
			continue
		}
		f.Put(name, servers.Get(name))
		if slices.Contains(disabled, name) && !slices.Contains(overlay, name) {
			overlay = append(overlay, name)
			grew = true
		}
	}
	if grew {
		f.SetDisabled(overlay)
	}
	return res, nil
}
