build2/reference/roi_align.o: reference/roi_align.c \
 reference/ref_internal.h reference/conform_ref.h
reference/ref_internal.h:
reference/conform_ref.h:
