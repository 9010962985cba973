build2/reference/bilinear.o: reference/bilinear.c \
 reference/ref_internal.h reference/conform_ref.h
reference/ref_internal.h:
reference/conform_ref.h:
