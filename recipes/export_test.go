package recipes

// Waiting is how many callers wait behind the node of cb's newest batch.
func (cb *Combiner) Waiting() int {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.open == nil {
		return 0
	}
	return len(cb.open.waiters)
}
