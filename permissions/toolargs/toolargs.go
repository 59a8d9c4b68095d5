// Package toolargs is the vocabulary of tool arguments that name paths: what a call does to each
// path (read, write, delete) and, for every tool massgen knows, which arguments those are. It is
// pure data and classification; the permission core decides on what it finds.
package toolargs

// Access is what an operation does to a path.
type Access uint8

const (
	// Read looks at the path (or lists it).
	Read Access = iota
	// Write creates or changes the path.
	Write
	// Delete removes or moves the path as a whole entry: a link goes, its target stays, and
	// whatever lies below a directory goes with it.
	Delete
)

func (a Access) String() string {
	switch a {
	case Write:
		return "write"
	case Delete:
		return "delete"
	}
	return "read"
}

// PathArg is one path found in a tool call and what the call does to it.
type PathArg struct {
	Arg    string // argument name ("paths[1]", "destination", "rm operand", ...)
	Path   string // as given
	Access Access
	// Glob is set for command words with unquoted *, ? or [: every match is judged, and the
	// directory the pattern is in.
	Glob bool
}
