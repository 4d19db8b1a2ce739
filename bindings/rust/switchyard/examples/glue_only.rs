switchyard::define_static_key_false!(K);
fn main() {
    if switchyard::static_branch_unlikely!(K) {
        println!("on")
    } else {
        println!("off")
    }
}
