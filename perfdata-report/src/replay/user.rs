//! A sample's user registers and stack copy, kept for the unwinder.

use crate::unwind::UserState;

/// The user registers and valid part of the stack copy of a sample that has both.
pub(crate) fn user_state(item: &perfdata_core::RecordRef<'_>) -> Option<Box<UserState>> {
    user_state_in(item, None)
}

/// [`user_state`], in `reuse` (its vectors filled again) if given.
pub(super) fn user_state_in(
    item: &perfdata_core::RecordRef<'_>,
    reuse: Option<Box<UserState>>,
) -> Option<Box<UserState>> {
    use perfdata_core::attr::SampleType;
    let attr = &item.meta.attrs()[item.locate().event?].attr;
    let both = SampleType::REGS_USER | SampleType::STACK_USER;
    if !attr.sample_type.contains(both) {
        return None;
    }
    // A sample whose fields do not parse was decoded (or refused) above; it is not
    // unwound.
    let view = item.sample().ok()??;
    let (regs, stack) = (view.regs_user?, view.stack_user?);
    let valid = stack
        .dyn_size
        .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let data = &stack.data[..valid.min(stack.data.len())];
    Some(match reuse {
        Some(mut u) => {
            u.abi = regs.abi;
            u.mask = attr.sample_regs_user;
            u.regs.clear();
            u.regs.extend(regs.regs.iter());
            u.stack.clear();
            u.stack.extend_from_slice(data);
            u.stack_size = stack.data.len() as u64;
            u
        }
        None => Box::new(UserState {
            abi: regs.abi,
            mask: attr.sample_regs_user,
            regs: regs.regs.to_vec(),
            stack: data.to_vec(),
            stack_size: stack.data.len() as u64,
        }),
    })
}
