/// The release this build belongs to (`searchctl --version`).
let searchlightVersion = "0.10.0"
