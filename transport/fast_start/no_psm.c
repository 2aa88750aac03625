/* Stand-ins for libpsm_infinipath.so.1 (PSM, Intel True Scale) and libpsm2.so.2 (PSM2,
 * Omni-Path), linked only into RPMP's short-lived tools (rpmpctl) so that they start fast; see
 * short_lived.h for the rest of the fast start.
 *
 * Why: Debian's libfabric.so.1 has its psm and psm2 providers built in, so every process
 * that loads libfabric also loads the two PSM libraries, and each of them calibrates the
 * CPU's cycle counter in an ELF constructor by sleeping for 100 ms before main() runs.
 * RPMP never uses these providers (see transport/providers.cc), so a tool that only needs
 * tcp, tcp;ofi_rxm, verbs;ofi_rxm or shm links these stand-ins instead: same sonames and
 * symbol versions, no constructor, and every entry point answers "no device"
 * (PSM_INTERNAL_ERR / PSM2_INTERNAL_ERR), which libfabric treats like a host without the
 * hardware: the providers disable themselves. Nothing else changes.
 *
 * The symbol list is the set libfabric 1.17 imports (objdump -T libfabric.so.1 | grep psm);
 * the linker scripts no_psm.map and no_psm2.map give them their versions. Thread-safe
 * (no state). */
#include <stdint.h>

#define PSM_INTERNAL_ERR 1 /* psm.h / psm2.h: PSM_INTERNAL_ERR = PSM2_INTERNAL_ERR = 1 */

#define NO_DEVICE(name) \
  int name(void) { return PSM_INTERNAL_ERR; }

#ifdef RPMP_NO_PSM2
NO_DEVICE(psm2_init)
NO_DEVICE(psm2_info_query)
NO_DEVICE(psm2_finalize)
NO_DEVICE(psm2_error_register_handler)
NO_DEVICE(psm2_ep_open)
NO_DEVICE(psm2_ep_open_opts_get_defaults)
NO_DEVICE(psm2_ep_close)
NO_DEVICE(psm2_ep_connect)
NO_DEVICE(psm2_ep_disconnect2)
NO_DEVICE(psm2_ep_epid_lookup2)
NO_DEVICE(psm2_epaddr_to_epid)
NO_DEVICE(psm2_poll)
NO_DEVICE(psm2_mq_init)
NO_DEVICE(psm2_mq_cancel)
NO_DEVICE(psm2_mq_improbe2)
NO_DEVICE(psm2_mq_imrecv)
NO_DEVICE(psm2_mq_ipeek)
NO_DEVICE(psm2_mq_iprobe2)
NO_DEVICE(psm2_mq_irecv2)
NO_DEVICE(psm2_mq_isend2)
NO_DEVICE(psm2_mq_send2)
NO_DEVICE(psm2_mq_test2)
NO_DEVICE(psm2_mq_wait2)
NO_DEVICE(psm2_am_get_parameters)
NO_DEVICE(psm2_am_get_source)
NO_DEVICE(psm2_am_register_handlers_2)
NO_DEVICE(psm2_am_reply_short)
NO_DEVICE(psm2_am_request_short)
void* psm2_epaddr_getctxt(void* epaddr) { return 0; }
void psm2_epaddr_setctxt(void* epaddr, void* ctxt) {}
uint64_t psm2_get_capability_mask(uint64_t req_cap_mask) { return 0; }
const char* psm2_error_get_string(int error) { return "no PSM2 device (RPMP stand-in)"; }
#else
NO_DEVICE(psm_init)
NO_DEVICE(psm_finalize)
NO_DEVICE(psm_error_register_handler)
NO_DEVICE(psm_ep_num_devunits)
NO_DEVICE(psm_ep_open)
NO_DEVICE(psm_ep_open_opts_get_defaults)
NO_DEVICE(psm_ep_close)
NO_DEVICE(psm_ep_connect)
NO_DEVICE(psm_ep_epid_lookup)
NO_DEVICE(psm_mq_init)
NO_DEVICE(psm_mq_finalize)
NO_DEVICE(psm_mq_cancel)
NO_DEVICE(psm_mq_ipeek)
NO_DEVICE(psm_mq_iprobe)
NO_DEVICE(psm_mq_irecv)
NO_DEVICE(psm_mq_isend)
NO_DEVICE(psm_mq_send)
NO_DEVICE(psm_mq_test)
NO_DEVICE(psm_am_get_parameters)
NO_DEVICE(psm_am_register_handlers)
NO_DEVICE(psm_am_reply_short)
NO_DEVICE(psm_am_request_short)
void* psm_epaddr_getctxt(void* epaddr) { return 0; }
void psm_epaddr_setctxt(void* epaddr, void* ctxt) {}
const char* psm_error_get_string(int error) { return "no PSM device (RPMP stand-in)"; }
#endif
