build2/reference/roi_align_rotated.o: reference/roi_align_rotated.c \
 reference/ref_internal.h reference/conform_ref.h
reference/ref_internal.h:
reference/conform_ref.h:
