package permissions

// IsPrivate reports whether abs (absolute, symlinks already resolved, as a walk over a resolved
// directory produces) lies in a private path, the deepest managed root deciding as in every
// decision: the agent's own workspace or temp workspace inside a private path is not private.
// Walks use it to leave private entries out; it does no I/O.
func (p *Policy) IsPrivate(abs string) bool {
	m := p.rootOf(p.flav.clean(abs))
	return m != nil && m.kind == kindPrivate
}
