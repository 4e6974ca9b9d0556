//! Set the cfg the kernel's Kbuild sets for the core (see the top-level Kbuild).
fn main() {
    println!("cargo:rustc-cfg=sched_eevdf_in_kernel");
    println!("cargo:rerun-if-changed=build.rs");
}
