build2/reference/grid_sampler.o: reference/grid_sampler.c \
 reference/ref_internal.h reference/conform_ref.h
reference/ref_internal.h:
reference/conform_ref.h:
