cargo build --release --locked && ./target/release/oltplab study --scale quick   # README's first command, in a clean clone of 2bb744a (target/release deps copied); quiet machine
