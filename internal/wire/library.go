package wire

// Libraries are the client libraries a run can soak, by the names a profile
// lists them under, in report order. transport.All holds one Transport per
// name, in this order.
var Libraries = []string{"gorilla", "gobwas", "coder", "gws", "fasthttp"}
