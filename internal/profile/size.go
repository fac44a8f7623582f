package profile

// ParseByteSize reads a size as a profile does ("16MiB", "512 KB", "1048576");
// soak bench's -rcvbuf takes the same form.
func ParseByteSize(s string) (ByteSize, error) { return parseByteSize(s) }
