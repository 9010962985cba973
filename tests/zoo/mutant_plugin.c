/* A generated mutant of the zoo as a plugin for conform: its kernels are compiled with
 * -Dconform_plugin_entry=zoo_mutant_entry (so the same object also links into the replay). */
#include "conform_plugin.h"

const conform_plugin *zoo_mutant_entry(void);

const conform_plugin *conform_plugin_entry(void) { return zoo_mutant_entry(); }
