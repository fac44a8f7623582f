package wire

// Libraries are the libraries the tool compares, by the names a profile
// lists them under, in report order: the one list. A run's columns are
// these, or variants of them (Column). transport.All holds one
// Transport per name, in this order (a test checks it); chat.Libs, the chat
// servers, is this list.
var Libraries = []string{"gorilla", "gobwas", "coder", "gws", "fasthttp"}
