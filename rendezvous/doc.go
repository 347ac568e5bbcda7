// Package rendezvous is the rendezvous of the ZooKeeper paper (§2.2): a
// launcher that starts a master and workers does not know the master's
// address in advance, so it creates a rendezvous node zr, the master fills
// zr with its address, and the workers read zr, waiting while it is empty.
//
//	zr := rendezvous.New(c, "/jobs/42/zr") // no I/O
//	launcher: launch, _ := zr.Create(ctx)  // ephemeral, empty
//	master:   zr.Publish(ctx, []byte(addr))
//	worker:   addr, _ := zr.Wait(ctx)
//
// zr is ephemeral and owned by the launcher, so that master and workers see
// it vanish when the launcher ends: [Rendezvous.Watch] reports it, and
// [Rendezvous.Wait] returns [ErrGone]. The launcher's [Launch] is a held
// value: its Done is closed when zr may be gone (the session lost, the
// connection suspended beyond the tolerance, zr deleted by someone else),
// and zr is not created again: a new zr would be a new rendezvous, which
// the master has not filled.
//
// In the common variant without a launcher, the master owns zr itself:
// [Rendezvous.PublishEphemeral] creates zr with the address and keeps it
// present, creating it again under each new session (a [Publication],
// which works like a group member: see package membership). Workers use
// Wait and Watch the same way; a master that restarts shows up in Watch as
// zr vanishing and coming back with a new creation zxid (Stat.Czxid) and,
// usually, a new address.
//
// A Launch and a Publication fence writes like every held thing in zkit:
// Multi (or Guard) for writes to ZooKeeper that must only happen while
// zr is held, Token for writes anywhere else.
//
// An empty zr means "not filled yet", so Publish refuses empty data.
//
// # Errors
//
// Input is checked before anything is sent: an [*client.InputError].
// Every other error names the call and the path; match it with errors.Is
// against this package's [ErrGone], [ErrLost], [ErrConflict] and the
// others, or client.ErrClosed once the client is closed.
package rendezvous
