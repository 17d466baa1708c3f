package httpwatch

// BeforeRead sets f to be called each time Next is about to read more of
// the stream from the connection, on the goroutine calling Next. Every
// event read so far has then been returned, and the read may block until
// the server sends more: a caller that hands events on in batches hands on
// what it has. Set it before the first Next.
func (w *streamWatcher) BeforeRead(f func()) { w.beforeRead = f }

// announcedBody is the watch body as the event reader sees it: each read
// is announced to BeforeRead's function first.
type announcedBody struct{ w *streamWatcher }

func (b announcedBody) Read(p []byte) (int, error) {
	if b.w.beforeRead != nil {
		b.w.beforeRead()
	}
	return b.w.body.Read(p)
}
