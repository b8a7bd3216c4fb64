/*
 * Log facilities: each framework of project opal and the layers opal, mca
 * and orte is a facility with a level. opal_log_mask ("warn,btl=debug,
 * rpc=info": a bare level sets every facility, facility=level one) raises a
 * facility's stream verbosity to the level's number: error 0, warn 5,
 * info 10 (<fw>_base_verbose's "why a component is not used"), debug 40
 * (every step), trace 100. The stream's verbosity is the larger of that
 * and <fw>_base_verbose, so either can make a framework talk.
 * opal_log_file (%r: the rank, %p: the pid) sends the facilities' streams
 * to a file instead of stderr. With either variable set, every line is a
 * log record: time, rank, pid, facility, level.
 */
#ifndef OPAL_MCA_BASE_MCA_BASE_LOG_H
#define OPAL_MCA_BASE_MCA_BASE_LOG_H

#include "opal/opal_config.h"

/* Parses mask and file (either may be NULL or empty) and keeps them for
 * the streams opened after. OPAL_ERR_BAD_PARAM, with a message naming the
 * unknown facility or level and listing the real ones, for a bad mask or a
 * file name that does not fit; the previous settings then stay. */
int mca_base_log_configure(const char *mask, const char *file);

/* Forgets the mask and the file (mca_base_close). */
void mca_base_log_reset(void);

/* The verbosity facility's stream gets: the larger of verbose and the
 * mask's level for it. */
int mca_base_log_verbosity(const char *facility, int verbose);

/* Opens facility's stream with that verbosity: plain_prefix in front of
 * each line on stderr, or log records (to the file, when one is set).
 * Returns the stream id or a negative OPAL_ERR_* (opal_output_open's). */
int mca_base_log_open(const char *facility, const char *plain_prefix, int verbose);

#endif /* OPAL_MCA_BASE_MCA_BASE_LOG_H */
